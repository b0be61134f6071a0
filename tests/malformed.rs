//! Bad and hostile input: every case ends in a clear one-line error or a report that
//! says what it could not read, within a time bound and (measured with a counting
//! allocator) a memory bound — never a panic, a hang, or memory that follows a lie in
//! a length prefix. Inputs are generated here, cut from the shared captures (skipped,
//! saying so, where `../shared/captures` is absent), or kept in `tests/corpus/`
//! (inputs the fuzzers found).

#[path = "support/wire.rs"]
mod wire;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use oomlens::proto::xla::{
    buffer_assignment_proto::BufferAlias, heap_simulator_trace, logical_buffer_proto,
    stack_frame_index_proto, BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace,
    HloComputationProto, HloInstructionProto, HloModuleProto, HloProto, LayoutProto,
    LogicalBufferProto, OpMetadata, ShapeProto, StackFrameIndexProto,
};
use oomlens::proto::xplane::{
    x_event, x_stat, XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata,
};
use oomlens::report::model::DiagnosisId;
use oomlens::{Error, HostReport};
use prost::Message;
use wire::{field_bytes, varint};

// ---------------------------------------------------------------------------------
// Bounds: a counting allocator (per thread, so parallel tests do not mix) and a
// deadline (the analysis runs on its own thread; a hang fails the test, not CI).

struct Counting;

thread_local! {
    static IN_USE: Cell<i64> = const { Cell::new(0) };
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn count(delta: i64) {
    let _ = IN_USE.try_with(|c| {
        let now = c.get().saturating_add(delta);
        c.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now)
            }
        });
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as i64);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as i64);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as i64));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as i64 - layout.size() as i64);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Time allowed for one analysis of a small input. The real captures take well under
/// 100 ms (debug build); a quadratic path or a hang on hostile input blows through this.
const TIME_LIMIT: Duration = Duration::from_secs(2);

/// Time allowed for an input of `bytes`: [`TIME_LIMIT`], plus, for the generated
/// inputs of millions of items, time linear in their size (an unoptimized build
/// decodes about 2–4 MB/s of such tiny fields; a quadratic path at a million items
/// would take hours, so the bound still catches one).
fn time_limit(bytes: usize) -> Duration {
    let per_mib = if cfg!(debug_assertions) { 1500 } else { 150 };
    TIME_LIMIT + Duration::from_millis((bytes as u64 >> 20) * per_mib)
}
const MIB: usize = 1 << 20;

struct Bounded<T> {
    value: T,
    /// The most bytes held at once during the call, above what was held before it.
    peak: usize,
    elapsed: Duration,
}

/// Runs `f` on a fresh thread and measures it; fails if it takes longer than `limit`.
fn bounded<T: Send + 'static>(
    what: &str,
    limit: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Bounded<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let base = IN_USE.with(Cell::get);
        PEAK.with(|p| p.set(base));
        let start = Instant::now();
        let value = f();
        let elapsed = start.elapsed();
        let peak = (PEAK.with(Cell::get) - base).max(0) as usize;
        let _ = tx.send((value, peak, elapsed));
    });
    match rx.recv_timeout(limit) {
        Ok((value, peak, elapsed)) => Bounded {
            value,
            peak,
            elapsed,
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: the analysis did not finish within {limit:?} (a hang?)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: the analysis panicked"),
    }
}

fn analyze_bytes(bytes: Vec<u8>) -> Result<HostReport, Error> {
    oomlens::analyze(
        &bytes,
        "test",
        "test.xplane.pb",
        &oomlens::Options::default(),
        &mut |_, _, _| {},
    )
}

/// Analyzes `bytes` within [`TIME_LIMIT`] and `memory` bytes of peak allocation
/// (beyond the input itself), and renders any report with every renderer.
fn check(what: &str, bytes: Vec<u8>, memory: usize) -> Result<HostReport, Error> {
    let what_owned = what.to_owned();
    let limit = time_limit(bytes.len());
    let r = bounded(what, limit, move || {
        let result = analyze_bytes(bytes);
        if let Ok(host) = &result {
            let report = oomlens::report(vec![host.clone()]);
            let _ = oomlens::report::text::render(&report, 10);
            let _ = oomlens::report::markdown::render(&report, 10);
            let _ = oomlens::report::json::render(&report);
        }
        result
    });
    assert!(
        r.peak <= memory,
        "{what_owned}: allocated {} bytes at peak, more than the {memory} allowed",
        r.peak
    );
    if let Err(e) = &r.value {
        assert_one_line_error(what, e);
    }
    if std::env::var_os("OOMLENS_TEST_BOUNDS").is_some() {
        eprintln!(
            "BOUNDS {what_owned}: {:?} of {limit:?}, peak {} KiB of {} KiB",
            r.elapsed,
            r.peak >> 10,
            memory >> 10
        );
    }
    if r.elapsed > TIME_LIMIT {
        eprintln!("{what_owned}: {:?} (allowed {limit:?})", r.elapsed);
    }
    r.value
}

fn assert_one_line_error(what: &str, e: &Error) {
    let text = e.to_string();
    assert!(!text.is_empty() && !text.contains('\n'), "{what}: {text:?}");
    // What is wrong, then what to do, separated by "; " or ": ".
    assert!(
        text.contains("; ") || text.contains(": "),
        "{what}: the message says no remedy: {text}"
    );
}

fn note<'r>(report: &'r HostReport, id: &str) -> Option<&'r str> {
    report
        .notes
        .iter()
        .find(|n| n.id == id)
        .map(|n| n.text.as_str())
}

fn expect_error(what: &str, result: Result<HostReport, Error>, kind: &str, says: &str) {
    match result {
        Err(e) => {
            assert_eq!(e.kind(), kind, "{what}: {e}");
            assert!(e.to_string().contains(says), "{what}: {e}");
        }
        Ok(_) => panic!("{what}: expected an error ({kind}), got a report"),
    }
}

// ---------------------------------------------------------------------------------
// Inputs.

fn shared(name: &str) -> Option<Vec<u8>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/captures")
        .join(format!("{name}.xplane.pb"));
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(_) => {
            eprintln!("SKIP: {} is absent; this check did not run", path.display());
            None
        }
    }
}

/// Deterministic pseudo-random numbers (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn stat_meta(plane: &mut XPlane, id: i64, name: &str) {
    plane.stat_metadata.insert(
        id,
        XStatMetadata {
            id,
            name: name.into(),
            description: String::new(),
        },
    );
}

fn int_stat(id: i64, v: i64) -> XStat {
    XStat {
        metadata_id: id,
        value: Some(x_stat::Value::Int64Value(v)),
    }
}

fn event(metadata_id: i64, offset_ps: i64, duration_ps: i64, stats: Vec<XStat>) -> XEvent {
    XEvent {
        metadata_id,
        data: Some(x_event::Data::OffsetPs(offset_ps)),
        duration_ps,
        stats,
    }
}

fn array(element_type: i32, dims: &[i64]) -> ShapeProto {
    ShapeProto {
        element_type,
        dimensions: dims.to_vec(),
        layout: Some(LayoutProto::default()),
        ..Default::default()
    }
}

fn instruction(id: i64, name: &str, opcode: &str, shape: ShapeProto) -> HloInstructionProto {
    HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        shape: Some(shape),
        metadata: Some(OpMetadata {
            op_name: format!("jit(f)/jvp(f)/{name}"),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn buffer(id: i64, size: i64, instruction_id: i64) -> LogicalBufferProto {
    LogicalBufferProto {
        id,
        size,
        defined_at: Some(logical_buffer_proto::Location {
            instruction_id,
            ..Default::default()
        }),
        color: 0,
    }
}

fn trace_event(kind: i32, buffer_id: i64, canonical: i64) -> heap_simulator_trace::Event {
    heap_simulator_trace::Event {
        kind,
        buffer_id,
        instruction_name: format!("op{buffer_id}"),
        share_with_canonical_id: canonical,
        ..Default::default()
    }
}

/// A small, sound module: a parameter, two temporaries with a heap trace, an output.
fn module(name: &str) -> HloProto {
    let instructions = vec![
        instruction(1, "p0", "parameter", array(11, &[256, 256])),
        instruction(2, "t0", "add", array(11, &[1024, 1024])),
        instruction(3, "t1", "multiply", array(11, &[512, 1024])),
        instruction(4, "out", "reduce", array(11, &[256])),
    ];
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: name.into(),
            entry_computation_name: "main".into(),
            computations: vec![HloComputationProto {
                name: "main".into(),
                instructions,
                id: 0,
                root_id: 4,
                ..Default::default()
            }],
            id: 7,
            ..Default::default()
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers: vec![
                buffer(1, 256 * 256 * 4, 1),
                buffer(2, 4 << 20, 2),
                buffer(3, 2 << 20, 3),
                buffer(4, 1024, 4),
            ],
            buffer_aliases: vec![],
            buffer_allocations: vec![
                BufferAllocationProto {
                    index: 0,
                    size: 256 * 256 * 4,
                    is_entry_computation_parameter: true,
                    assigned: vec![assigned(1)],
                    ..Default::default()
                },
                BufferAllocationProto {
                    index: 1,
                    size: 6 << 20,
                    assigned: vec![assigned(2), assigned(3)],
                    ..Default::default()
                },
                BufferAllocationProto {
                    index: 2,
                    size: 1024,
                    maybe_live_out: true,
                    assigned: vec![assigned(4)],
                    ..Default::default()
                },
            ],
            heap_simulator_traces: vec![HeapSimulatorTrace {
                events: vec![
                    trace_event(0, 2, 0),
                    trace_event(0, 3, 0),
                    trace_event(1, 2, 0),
                    trace_event(1, 3, 0),
                ],
                ..Default::default()
            }],
        }),
    }
}

fn assigned(id: i64) -> oomlens::proto::xla::buffer_allocation_proto::Assigned {
    oomlens::proto::xla::buffer_allocation_proto::Assigned {
        logical_buffer_id: id,
        ..Default::default()
    }
}

/// `/host:metadata` with one event metadata per module, its HloProto as bytes.
fn metadata_plane(modules: &[(i64, &str, Vec<u8>)]) -> XPlane {
    let mut plane = XPlane {
        id: 1,
        name: "/host:metadata".into(),
        ..Default::default()
    };
    stat_meta(&mut plane, 1, "Hlo Proto");
    for (id, name, bytes) in modules {
        plane.event_metadata.insert(
            *id,
            XEventMetadata {
                id: *id,
                name: (*name).into(),
                stats: vec![XStat {
                    metadata_id: 1,
                    value: Some(x_stat::Value::BytesValue(bytes.clone())),
                }],
                ..Default::default()
            },
        );
    }
    plane
}

/// `/host:CPU` with allocator events (`GPU_0_bfc`) inside one launch of `jit_f`.
fn host_plane(allocations: usize) -> XPlane {
    let mut plane = XPlane {
        id: 2,
        name: "/host:CPU".into(),
        ..Default::default()
    };
    for (id, name) in [
        (1, "allocator_name"),
        (2, "bytes_allocated"),
        (3, "bytes_reserved"),
        (4, "bytes_available"),
        (5, "allocation_bytes"),
        (6, "addr"),
        (7, "GPU_0_bfc"),
        (8, "fragmentation"),
    ] {
        stat_meta(&mut plane, id, name);
    }
    for (id, name) in [
        (1, "MemoryAllocation"),
        (2, "MemoryDeallocation"),
        (3, "PjRtStreamExecutorLoadedExecutable::Execute"),
    ] {
        plane.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: name.into(),
                ..Default::default()
            },
        );
    }
    let mut events = vec![event(3, 0, 1_000_000_000, vec![])];
    let mut in_use = 0i64;
    for i in 0..allocations {
        let size = 1 << 20;
        let alloc = i % 3 != 2;
        in_use += if alloc { size } else { -size };
        events.push(event(
            if alloc { 1 } else { 2 },
            1000 * (i as i64 + 1),
            0,
            vec![
                XStat {
                    metadata_id: 1,
                    value: Some(x_stat::Value::RefValue(7)),
                },
                int_stat(2, in_use.max(0)),
                int_stat(3, 0),
                int_stat(4, 1 << 30),
                int_stat(5, size),
                int_stat(6, 0x1000 * i as i64),
                XStat {
                    metadata_id: 8,
                    value: Some(x_stat::Value::DoubleValue(0.25)),
                },
            ],
        ));
    }
    plane.lines.push(XLine {
        id: 1,
        name: "main".into(),
        timestamp_ns: 1_000,
        events,
        ..Default::default()
    });
    plane
}

fn device_plane() -> XPlane {
    XPlane {
        id: 3,
        name: "/device:GPU:0".into(),
        ..Default::default()
    }
}

/// A small, sound capture of our own: plan, allocator events, a device.
fn small_capture() -> XSpace {
    XSpace {
        planes: vec![
            metadata_plane(&[(7, "jit_f(7)", module("jit_f").encode_to_vec())]),
            host_plane(30),
            device_plane(),
        ],
        hostnames: vec!["test".into()],
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------------
// The cases.

#[test]
fn our_small_capture_is_sound() {
    let report = check("small capture", small_capture().encode_to_vec(), 8 * MIB).expect("ok");
    assert_eq!(report.modules.len(), 1);
    assert!(report.modules[0].plan.has_heap_trace);
    assert_eq!(report.modules[0].plan.heap_peak_bytes, 6 << 20);
    let rt = report.runtime.as_ref().expect("runtime");
    assert_eq!(rt.allocators.len(), 1, "{:?}", rt.allocators);
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

#[test]
fn empty_file() {
    expect_error(
        "empty",
        check("empty", vec![], MIB),
        "empty",
        "the file is empty",
    );
}

#[test]
fn foreign_files_are_named() {
    let png =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89".to_vec();
    let gzip = b"\x1f\x8b\x08\0\0\0\0\0\0\x03\xcb\x48\xcd\xc9\xc9\x07\0\x86\xa6\x10\x36\x05\0\0\0"
        .to_vec();
    let json = br#"{"displayTimeUnit":"ns","traceEvents":[{"ph":"X","name":"a"}]}"#.to_vec();
    let json_array = b"  [ {\"ph\": \"X\"} ]\n".to_vec();
    let zip = b"PK\x03\x04\x14\0\0\0\x08\0".to_vec();
    let text = b"Traceback (most recent call last):\n  File \"train.py\"".to_vec();
    for (what, bytes, says) in [
        ("png", png, "PNG"),
        ("gzip", gzip, "gzip"),
        ("json", json, "JSON"),
        ("json array", json_array, "JSON"),
        ("zip", zip, "zip"),
        ("text", text, "text file"),
    ] {
        expect_error(what, check(what, bytes, MIB), "not_a_capture", says);
    }
    // An HloProto passed by mistake also starts with field 1, length-delimited.
    let hlo = module("jit_f").encode_to_vec();
    expect_error(
        "hlo proto",
        check("hlo proto", hlo, 4 * MIB),
        "not_a_capture",
        "profiler plane",
    );
}

#[test]
fn a_length_prefix_larger_than_the_file_is_not_allocated() {
    // A plane that claims 2^62 bytes, 4 GiB, 1 MiB: all in a file of a few bytes. The
    // file ends inside it: it is read up to the end (its name), and the report says
    // where it was cut and where the plane says it ends.
    for claimed in [1u64 << 62, 4 << 30, 1 << 20, 300] {
        let mut bytes = vec![0x0a];
        varint(claimed, &mut bytes);
        let header = bytes.len();
        bytes.extend_from_slice(b"\x12\x09/host:CPU");
        let file = bytes.len();
        let what = format!("plane claiming {claimed} bytes");
        let report = check(&what, bytes.clone(), 256 << 10).expect("a partial report");
        let text = note(&report, "capture_truncated").expect("truncation note");
        assert!(
            text.contains(&format!("the file has {file} bytes"))
                && text.contains("its plane /host:CPU")
                && text.contains(&format!("runs to byte {}", header as u64 + claimed)),
            "{what}: {text}"
        );
        // Cut inside the plane's name: nothing to read, refused as truncated.
        bytes.truncate(file - 4);
        let what = format!("{what}, its name cut");
        expect_error(
            &what,
            check(&what, bytes, 256 << 10),
            "truncated",
            "truncated",
        );
    }
    // Inside a sound plane: a line, an event metadata entry, a stat metadata entry and
    // a plane stat each claiming more than their plane holds.
    for field in [3u32, 4, 5, 6] {
        let mut plane = Vec::new();
        field_bytes(2, b"/host:CPU", &mut plane);
        varint(u64::from(field) << 3 | 2, &mut plane);
        varint(1 << 40, &mut plane);
        plane.extend_from_slice(&[0u8; 16]);
        let mut bytes = Vec::new();
        field_bytes(1, &plane, &mut bytes);
        let what = format!("plane field {field} claiming 1 TiB");
        match check(&what, bytes, 256 << 10) {
            Err(e) => assert_eq!(e.kind(), "corrupt", "{what}: {e}"),
            Ok(report) => assert!(!report.notes.is_empty(), "{what}: no note"),
        }
    }
    // Two planes, the second cut short: a partial report that says so.
    let mut bytes = Vec::new();
    field_bytes(1, &host_plane(3).encode_to_vec(), &mut bytes);
    bytes.push(0x0a);
    varint(1 << 30, &mut bytes);
    bytes.extend_from_slice(b"\x12\x0e/host:metadata");
    let report = check("second plane claiming 1 GiB", bytes, MIB).expect("partial report");
    let text = note(&report, "capture_truncated").expect("truncation note");
    assert!(
        text.contains("/host:CPU") && text.contains("/host:metadata"),
        "{text}"
    );
}

#[test]
fn truncated_at_every_sixty_fourth() {
    for name in ["tracelens_jax08_conv_tw003", "xprof_tpu_inference_2_clean"] {
        let Some(bytes) = shared(name) else { continue };
        let mut partial = 0;
        for i in 1..64 {
            let cut = bytes.len() * i / 64;
            let what = format!("{name} cut at {cut}");
            // Memory may follow the real bytes read (a window over a plane), not more.
            match check(&what, bytes[..cut].to_vec(), 4 * MIB + 2 * cut) {
                Ok(report) => {
                    let text = note(&report, "capture_truncated")
                        .unwrap_or_else(|| panic!("{what}: no truncation note"));
                    assert!(
                        text.contains(&format!("the file has {cut} bytes")),
                        "{text}"
                    );
                    partial += 1;
                }
                Err(e) => assert!(
                    matches!(e.kind(), "truncated" | "corrupt" | "not_a_capture"),
                    "{what}: {e}"
                ),
            }
        }
        eprintln!("{name}: {partial} of 63 cuts gave a partial report");
    }
    // Our own capture, at every byte: a cut between two top-level fields leaves a
    // well-formed (smaller) capture; any other cut is noticed.
    let space = small_capture();
    let bytes = space.encode_to_vec();
    let mut boundaries = vec![];
    let mut at = 0;
    for plane in &space.planes {
        at += {
            let mut one = XSpace::default();
            one.planes.push(plane.clone());
            one.encode_to_vec().len()
        };
        boundaries.push(at);
    }
    for cut in 1..bytes.len() {
        let what = format!("small capture cut at {cut}");
        if let Ok(report) = check(&what, bytes[..cut].to_vec(), 4 * MIB) {
            assert!(
                note(&report, "capture_truncated").is_some() || boundaries.contains(&cut),
                "{what}: no truncation note"
            );
        }
    }
}

#[test]
fn random_byte_flips() {
    let mut inputs = vec![("small capture", small_capture().encode_to_vec())];
    if let Some(b) = shared("tracelens_jax08_gemm_tw003") {
        inputs.push(("gemm", b));
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (name, original) in inputs {
        for round in 0..120 {
            let mut bytes = original.clone();
            let flips = 1 + rng.below(8);
            for _ in 0..flips {
                let at = rng.below(bytes.len());
                bytes[at] = match rng.below(4) {
                    0 => bytes[at] ^ (1 << rng.below(8)),
                    1 => 0xff,
                    2 => 0x00,
                    _ => rng.next() as u8,
                };
            }
            let what = format!("{name} flip round {round}");
            let memory = 4 * MIB + 2 * bytes.len();
            let _ = check(&what, bytes, memory);
        }
    }
}

#[test]
fn deeply_nested_messages() {
    // A tuple shape nested past prost's recursion limit: the module is unreadable,
    // the report says which. (Built as raw bytes: prost's own encoder would recurse.)
    let mut shape = array(11, &[2]).encode_to_vec();
    for _ in 0..5000 {
        let mut outer = vec![0x10, 13]; // element_type = TUPLE
        field_bytes(4, &shape, &mut outer);
        shape = outer;
    }
    let mut ins = Vec::new();
    field_bytes(3, &shape, &mut ins);
    let mut computation = Vec::new();
    field_bytes(2, &ins, &mut computation);
    let mut hlo_module = Vec::new();
    field_bytes(3, &computation, &mut hlo_module);
    // Appending a message merges it into the one before: a module with one more
    // computation, whose instruction has the nested shape.
    let mut deep = module("jit_deep").encode_to_vec();
    field_bytes(1, &hlo_module, &mut deep);
    let space = XSpace {
        planes: vec![
            metadata_plane(&[
                (7, "jit_f(7)", module("jit_f").encode_to_vec()),
                (8, "jit_deep(8)", deep),
            ]),
            device_plane(),
        ],
        ..Default::default()
    };
    let report = check("nested 5000", space.encode_to_vec(), 8 * MIB).expect("report");
    assert_eq!(report.modules.len(), 1);
    let text = note(&report, "module_unreadable").expect("note");
    assert!(text.contains("jit_deep(8)"), "{text}");

    // Nested within the limit: decoded, and printed without recursing without end.
    let mut shape = array(11, &[2]);
    for _ in 0..90 {
        shape = ShapeProto {
            element_type: 13,
            tuple_shapes: vec![shape],
            ..Default::default()
        };
    }
    let mut nested = module("jit_nested");
    nested.hlo_module.as_mut().unwrap().computations[0].instructions[1].shape = Some(shape);
    let space = XSpace {
        planes: vec![
            metadata_plane(&[(8, "jit_nested(8)", nested.encode_to_vec())]),
            device_plane(),
        ],
        ..Default::default()
    };
    let report = check("nested 90", space.encode_to_vec(), 8 * MIB).expect("report");
    assert_eq!(report.modules.len(), 1);

    // Raw bytes: a million nested length-delimited fields in a plane's stat.
    let mut inner: Vec<u8> = Vec::new();
    for _ in 0..200_000 {
        let mut next = Vec::with_capacity(inner.len() + 6);
        field_bytes(6, &inner, &mut next);
        inner = next;
    }
    let mut plane = Vec::new();
    field_bytes(2, b"/host:CPU", &mut plane);
    field_bytes(6, &inner, &mut plane);
    let mut bytes = Vec::new();
    field_bytes(1, &plane, &mut bytes);
    let n = bytes.len();
    let _ = check("nested raw", bytes, 16 * MIB + 4 * n);
}

#[test]
fn millions_of_tiny_planes() {
    let mut bytes = Vec::new();
    field_bytes(1, &host_plane(3).encode_to_vec(), &mut bytes);
    for _ in 0..2_000_000 {
        bytes.extend_from_slice(&[0x0a, 0x00]);
    }
    let report = check("2M empty planes", bytes, 24 * MIB).expect("report");
    assert!(report.planes.len() <= oomlens::capture::MAX_PLANES);
    assert!(
        note(&report, "planes_not_read").is_some(),
        "{:?}",
        report.notes
    );

    // Only empty planes: nothing a profiler writes.
    let bytes: Vec<u8> = [0x0a, 0x00].repeat(1_000_000);
    expect_error(
        "1M empty planes",
        check("1M empty planes", bytes, 24 * MIB),
        "not_a_capture",
        "profiler plane",
    );
}

#[test]
fn millions_of_tiny_stats() {
    // A host plane with a million stats: half a million stat metadata entries, a
    // quarter million plane stats, an event type with a quarter million stats. Memory
    // follows the real bytes, capped where a capture cannot need more.
    let mut plane = Vec::new();
    field_bytes(2, b"/host:CPU", &mut plane);
    for i in 1..=500_000u64 {
        let mut meta = Vec::new();
        varint(1 << 3, &mut meta);
        varint(i, &mut meta);
        field_bytes(2, b"s", &mut meta);
        let mut entry = Vec::new();
        varint(1 << 3, &mut entry);
        varint(i, &mut entry);
        field_bytes(2, &meta, &mut entry);
        field_bytes(5, &entry, &mut plane);
    }
    for i in 0..250_000u64 {
        field_bytes(6, &[0x08, (i % 100) as u8 + 1, 0x20, 0x01], &mut plane);
    }
    let mut meta = Vec::new();
    varint(1 << 3, &mut meta);
    varint(9, &mut meta);
    field_bytes(2, b"MemoryAllocation", &mut meta);
    for _ in 0..250_000 {
        field_bytes(5, &[0x08, 0x02, 0x20, 0x05], &mut meta);
    }
    let mut entry = vec![0x08, 0x09];
    field_bytes(2, &meta, &mut entry);
    field_bytes(4, &entry, &mut plane);
    let mut bytes = Vec::new();
    field_bytes(1, &plane, &mut bytes);
    let n = bytes.len();
    let report = check("1M stats", bytes, 16 * MIB + 8 * n).expect("report");
    assert_eq!(report.planes.len(), 1);

    // A million events, each with stats whose ids and refs point nowhere.
    let mut host = host_plane(0);
    let events: Vec<XEvent> = (0..1_000_000)
        .map(|i| {
            event(
                1 + i % 5,
                i,
                1,
                vec![
                    XStat {
                        metadata_id: 1,
                        value: Some(x_stat::Value::RefValue(1 << 40)),
                    },
                    int_stat(999, -1),
                ],
            )
        })
        .collect();
    host.lines[0].events = events;
    let space = XSpace {
        planes: vec![host, device_plane()],
        ..Default::default()
    };
    let bytes = space.encode_to_vec();
    let n = bytes.len();
    // Allocator records are kept per event (48 bytes each, capped at 2^20 records).
    let report = check("1M events", bytes, 96 * MIB + 2 * n).expect("report");
    assert!(report.runtime.is_some());
}

#[test]
fn thousands_of_modules_and_launches() {
    // Every launch is matched to a module, and every module counts its launches: a
    // lookup per pair would be modules × launches.
    let modules = 2000i64;
    let launches = 50_000i64;
    let hlos: Vec<(i64, String, Vec<u8>)> = (0..modules)
        .map(|i| {
            let name = format!("jit_m{i}");
            let mut hlo = module(&name);
            hlo.buffer_assignment = None;
            (
                1000 + i,
                format!("{name}({})", 1000 + i),
                hlo.encode_to_vec(),
            )
        })
        .collect();
    let refs: Vec<(i64, &str, Vec<u8>)> = hlos
        .iter()
        .map(|(id, label, bytes)| (*id, label.as_str(), bytes.clone()))
        .collect();
    let mut host = host_plane(0);
    for i in 0..modules {
        host.event_metadata.insert(
            100 + i,
            XEventMetadata {
                id: 100 + i,
                name: format!("CommonPjRtLoadedExecutable::Execute (jit_m{i})"),
                ..Default::default()
            },
        );
    }
    host.lines[0].events = (0..launches)
        .map(|i| event(100 + i % modules, 10 * i, 5, vec![]))
        .collect();
    // Kernels on the device, naming their module, so selection looks at every launch.
    let mut device = device_plane();
    stat_meta(&mut device, 1, "hlo_module");
    stat_meta(&mut device, 2, "jit_m0");
    device.event_metadata.insert(
        1,
        XEventMetadata {
            id: 1,
            name: "kernel".into(),
            ..Default::default()
        },
    );
    device.lines.push(XLine {
        id: 1,
        name: "stream".into(),
        events: (0..1000)
            .map(|i| {
                event(
                    1,
                    10 * modules * i + 1,
                    1,
                    vec![XStat {
                        metadata_id: 1,
                        value: Some(x_stat::Value::RefValue(2)),
                    }],
                )
            })
            .collect(),
        ..Default::default()
    });
    let space = XSpace {
        planes: vec![metadata_plane(&refs), host, device],
        ..Default::default()
    };
    let bytes = space.encode_to_vec();
    let n = bytes.len();
    let report = check("modules × launches", bytes, 64 * MIB + 8 * n).expect("report");
    assert_eq!(report.modules.len(), modules as usize);
    let launched: u64 = report.modules.iter().map(|m| m.executions).sum();
    assert_eq!(launched, launches as u64);
}

#[test]
fn ids_and_refs_that_point_nowhere() {
    let mut space = small_capture();
    let host = &mut space.planes[1];
    for e in &mut host.lines[0].events {
        e.metadata_id += 1000;
    }
    host.lines[0].events.push(event(
        1,
        5,
        0,
        vec![
            XStat {
                metadata_id: 1,
                value: Some(x_stat::Value::RefValue(123_456)),
            },
            int_stat(77, 1),
            XStat {
                metadata_id: 2,
                value: Some(x_stat::Value::StrValue("not a number".into())),
            },
        ],
    ));
    // Module plan: buffers defined by instructions that do not exist, allocations
    // assigning buffers that do not exist, traces on unknown buffers, aliases to nowhere.
    let mut hlo = module("jit_f");
    let a = hlo.buffer_assignment.as_mut().unwrap();
    a.logical_buffers.push(buffer(50, 1 << 20, 9999));
    a.buffer_allocations[1].assigned.push(assigned(12345));
    a.buffer_allocations[1].assigned.push(assigned(50));
    a.heap_simulator_traces[0]
        .events
        .insert(0, trace_event(0, 777, 0));
    a.heap_simulator_traces[0]
        .events
        .insert(0, trace_event(0, 50, 0));
    a.heap_simulator_traces[0]
        .events
        .push(trace_event(2, 888, 999));
    a.buffer_aliases.push(BufferAlias {
        source_buffer_id: 50,
        location: Some(logical_buffer_proto::Location {
            instruction_id: 4242,
            instruction_name: "nowhere".into(),
            ..Default::default()
        }),
    });
    hlo.hlo_module.as_mut().unwrap().stack_frame_index = Some(StackFrameIndexProto {
        stack_frames: vec![stack_frame_index_proto::StackFrame {
            file_location_id: 99,
            parent_frame_id: -5,
        }],
        ..Default::default()
    });
    for (i, ins) in hlo.hlo_module.as_mut().unwrap().computations[0]
        .instructions
        .iter_mut()
        .enumerate()
    {
        ins.metadata.as_mut().unwrap().stack_frame_id = [i32::MIN, -1, 1, i32::MAX][i % 4];
    }
    space.planes[0] = metadata_plane(&[(7, "jit_f(7)", hlo.encode_to_vec())]);
    let report = check("dangling ids", space.encode_to_vec(), 8 * MIB).expect("report");
    assert_eq!(report.modules.len(), 1);
}

/// A module whose sizes, dimensions and parameter numbers sit at the edges of i64,
/// with enough huge allocations that any unchecked sum overflows.
fn huge_module() -> HloProto {
    let mut hlo = module("jit_huge");
    let m = hlo.hlo_module.as_mut().unwrap();
    let ins = &mut m.computations[0].instructions;
    ins[1].shape = Some(array(11, &[i64::MAX, i64::MAX, 3]));
    ins[2].shape = Some(array(11, &[i64::MIN, -1]));
    ins[3].shape = Some(ShapeProto {
        element_type: 21,
        dimensions: vec![i64::MAX],
        layout: Some(LayoutProto {
            element_size_in_bits: i64::MAX,
            memory_space: i64::MIN,
            ..Default::default()
        }),
        ..Default::default()
    });
    let a = hlo.buffer_assignment.as_mut().unwrap();
    for b in &mut a.logical_buffers {
        b.size = [i64::MAX, i64::MIN, -1, i64::MAX - 1][b.id as usize % 4];
    }
    for (i, alloc) in a.buffer_allocations.iter_mut().enumerate() {
        alloc.size = [i64::MAX, i64::MIN, i64::MAX][i % 3];
        alloc.parameter_number = i64::MIN;
    }
    // Many more huge allocations of every kind, so every sum would overflow.
    for i in 0..64 {
        a.buffer_allocations.push(BufferAllocationProto {
            index: 3 + i,
            size: i64::MAX,
            is_entry_computation_parameter: i % 2 == 0,
            maybe_live_out: i % 3 == 0,
            is_constant: i % 5 == 0,
            is_parameter_aliased_with_output: i % 4 == 0,
            assigned: vec![assigned(2), assigned(i64::MAX)],
            ..Default::default()
        });
    }
    // The trace allocates the huge buffers again and again.
    let events = &mut a.heap_simulator_traces[0].events;
    for _ in 0..100 {
        events.push(trace_event(0, 2, 0));
        events.push(trace_event(0, 4, 0));
    }
    hlo
}

#[test]
fn negative_and_huge_sizes() {
    let hlo = huge_module();
    let mut space = small_capture();
    space.planes[0] = metadata_plane(&[(7, "jit_huge(7)", hlo.encode_to_vec())]);
    // Allocator events with absurd values and times.
    let host = &mut space.planes[1];
    host.lines[0].timestamp_ns = i64::MAX;
    for (i, e) in host.lines[0].events.iter_mut().enumerate() {
        e.data = Some(x_event::Data::OffsetPs([i64::MAX, i64::MIN, -1][i % 3]));
        e.duration_ps = [i64::MIN, i64::MAX, -5][i % 3];
        for s in &mut e.stats {
            s.value = Some(match i % 4 {
                0 => x_stat::Value::Int64Value(i64::MIN),
                1 => x_stat::Value::Uint64Value(u64::MAX),
                2 => x_stat::Value::DoubleValue(f64::NAN),
                _ => x_stat::Value::DoubleValue(-f64::INFINITY),
            });
        }
    }
    let report = check("huge sizes", space.encode_to_vec(), 8 * MIB).expect("report");
    let plan = &report.modules[0].plan;
    assert_eq!(plan.allocation_bytes, u64::MAX, "sums saturate");
    assert_eq!(
        plan.total_bytes,
        u64::MAX,
        "a saturated part is not cancelled"
    );
    let text = plan.replay_note.as_deref().unwrap_or_default();
    assert!(text.contains("sizes no device has"), "{text}");
}

#[test]
fn runtime_values_at_the_edges() {
    // Three launches of jit_f, allocations of u64::MAX bytes between them, host events
    // lasting i64::MAX, a device that says it has u64::MAX bytes: the runtime summary
    // (growth, live arrays at the last launch, host activity) saturates, never panics.
    let mut host = host_plane(0);
    host.event_metadata.insert(
        3,
        XEventMetadata {
            id: 3,
            name: "CommonPjRtLoadedExecutable::Execute (jit_huge)".into(),
            ..Default::default()
        },
    );
    host.event_metadata.insert(
        4,
        XEventMetadata {
            id: 4,
            name: "$<unknown> append".into(),
            ..Default::default()
        },
    );
    let huge = |id: i64| XStat {
        metadata_id: id,
        value: Some(x_stat::Value::Uint64Value(u64::MAX)),
    };
    let mut events = Vec::new();
    for launch in 0..3i64 {
        let t = launch * 1_000_000;
        events.push(event(3, t, 100_000, vec![]));
        for k in 0..4 {
            events.push(event(
                if k == 3 { 2 } else { 1 },
                t + 10 + k,
                0,
                vec![
                    XStat {
                        metadata_id: 1,
                        value: Some(x_stat::Value::RefValue(7)),
                    },
                    huge(2),
                    huge(3),
                    huge(4),
                    huge(5),
                    int_stat(6, k),
                ],
            ));
        }
        events.push(event(4, t + 200_000, i64::MAX, vec![]));
        events.push(event(4, t + 300_000, i64::MAX, vec![]));
    }
    host.lines[0].events = events;
    let mut device = device_plane();
    stat_meta(&mut device, 1, "memory_size");
    device.stats.push(XStat {
        metadata_id: 1,
        value: Some(x_stat::Value::Uint64Value(u64::MAX)),
    });
    let space = XSpace {
        planes: vec![
            metadata_plane(&[(7, "jit_f(7)", huge_module().encode_to_vec())]),
            host,
            device,
        ],
        ..Default::default()
    };
    let report = check("runtime edges", space.encode_to_vec(), 8 * MIB).expect("report");
    let rt = report.runtime.as_ref().expect("runtime");
    assert_eq!(rt.executions.len(), 3, "{:?}", rt.executions);
}

#[test]
fn heap_traces_that_free_twice_or_free_unknown_buffers() {
    let mut hlo = module("jit_f");
    let events = &mut hlo
        .buffer_assignment
        .as_mut()
        .unwrap()
        .heap_simulator_traces[0]
        .events;
    events.push(trace_event(1, 2, 0)); // 2 freed again
    events.push(trace_event(1, 2, 0));
    events.push(trace_event(1, 4242, 0)); // never allocated, unknown
    events.push(trace_event(1, 4, 0)); // known, never allocated
    events.push(trace_event(7, 3, 0)); // unknown kind
    events.push(trace_event(0, 2, 0)); // allocated again after the double free
    let mut space = small_capture();
    space.planes[0] = metadata_plane(&[(7, "jit_f(7)", hlo.encode_to_vec())]);
    let report = check("double free", space.encode_to_vec(), 8 * MIB).expect("report");
    let plan = &report.modules[0].plan;
    let text = plan.replay_note.as_deref().expect("a replay note");
    assert!(text.contains("freed more often than allocated"), "{text}");
    assert!(text.contains("unknown heap event kind 7"), "{text}");
    assert_eq!(plan.heap_peak_bytes, 6 << 20);
}

#[test]
fn share_with_cycles_and_long_chains() {
    // 2 shares 3, 3 shares 2: a cycle, refused and reported.
    let mut hlo = module("jit_f");
    let events = &mut hlo
        .buffer_assignment
        .as_mut()
        .unwrap()
        .heap_simulator_traces[0]
        .events;
    events.clear();
    events.extend([
        trace_event(0, 2, 0),
        trace_event(2, 3, 2),
        trace_event(2, 2, 3),
        trace_event(1, 2, 0),
        trace_event(1, 3, 0),
        trace_event(1, 2, 0),
    ]);
    let mut space = small_capture();
    space.planes[0] = metadata_plane(&[(7, "jit_f(7)", hlo.encode_to_vec())]);
    let report = check("share cycle", space.encode_to_vec(), 8 * MIB).expect("report");
    let text = report.modules[0].plan.replay_note.as_deref().expect("note");
    assert!(text.contains("cycle"), "{text}");

    // A chain of 50,000 shares, then every buffer freed in allocation order: each
    // free finds the chain's root (quadratic without path compression), and a FIFO
    // free of many live buffers (quadratic with a linear search of the live list).
    let n = 50_000i64;
    let mut hlo = module("jit_chain");
    let a = hlo.buffer_assignment.as_mut().unwrap();
    a.logical_buffers = (1..=2 * n).map(|i| buffer(i, 1024, 2)).collect();
    a.buffer_allocations[1].assigned = (1..=2 * n).map(assigned).collect();
    let mut events = vec![trace_event(0, 1, 0)];
    events.extend((2..=n).map(|i| trace_event(2, i, i - 1)));
    events.extend((n + 1..=2 * n).map(|i| trace_event(0, i, 0)));
    events.extend((1..=2 * n).map(|i| trace_event(1, i, 0)));
    a.heap_simulator_traces[0].events = events;
    let bytes = hlo.encode_to_vec();
    let limit = time_limit(bytes.len());
    let r = bounded("share chain", limit, move || {
        let hlo = HloProto::decode(&bytes[..]).unwrap();
        oomlens::plan::analyze(&hlo)
    });
    eprintln!("share chain: {:?}", r.elapsed);
    assert_eq!(r.value.heap_peak_bytes, 1024 * (n as u64 + 1));
}

#[test]
fn a_corrupt_hlo_proto_leaves_the_rest_of_the_report() {
    let mut bad = module("jit_bad").encode_to_vec();
    let n = bad.len();
    bad.truncate(n / 2);
    bad.extend_from_slice(&[0xff; 12]);
    let space = XSpace {
        planes: vec![
            metadata_plane(&[
                (7, "jit_f(7)", module("jit_f").encode_to_vec()),
                (9, "jit_bad(9)", bad),
            ]),
            host_plane(9),
            device_plane(),
        ],
        ..Default::default()
    };
    let report = check("corrupt hlo", space.encode_to_vec(), 8 * MIB).expect("report");
    assert_eq!(report.modules.len(), 1);
    assert_eq!(report.modules[0].name, "jit_f");
    let text = note(&report, "module_unreadable").expect("note");
    assert!(
        text.contains("jit_bad(9)") && text.contains("does not decode"),
        "{text}"
    );
    assert!(report.runtime.is_some());
}

#[test]
fn a_damaged_plane_leaves_the_rest_of_the_report() {
    // The device plane's second line holds an event with an impossible wire type, and
    // the host plane ends in a line whose length runs past the plane. The device plane
    // has an `hlo_module` stat, as XLA's GPU planes do: only then are lines other than
    // "XLA Modules" read at all (a plane whose events name no module has nothing there).
    let mut device = device_plane();
    stat_meta(&mut device, 1, "hlo_module");
    let mut device = device.encode_to_vec();
    let mut line = vec![0x08, 0x01];
    field_bytes(4, &[0x08, 0x01], &mut line);
    field_bytes(4, &[0x0f, 0x00], &mut line);
    field_bytes(3, &line, &mut device);
    let mut host = host_plane(30).encode_to_vec();
    host.extend_from_slice(&[0x1a, 0x7f, 0x08]);
    let mut bytes = Vec::new();
    field_bytes(
        1,
        &metadata_plane(&[(7, "jit_f(7)", module("jit_f").encode_to_vec())]).encode_to_vec(),
        &mut bytes,
    );
    field_bytes(1, &host, &mut bytes);
    field_bytes(1, &device, &mut bytes);
    let report = check("damaged planes", bytes, 8 * MIB).expect("partial report");
    assert_eq!(report.modules.len(), 1);
    let rt = report.runtime.as_ref().expect("runtime");
    assert_eq!(rt.allocators.len(), 1);
    let text = note(&report, "plane_damaged").expect("note");
    assert!(
        text.contains("/device:GPU:0") && text.contains("/host:CPU"),
        "{text}"
    );
    assert!(text.contains("unknown wire type"), "{text}");
}

// ---------------------------------------------------------------------------------
// Captures that lack a part say so.

#[test]
fn a_capture_without_host_metadata_says_there_is_no_plan() {
    let Some(bytes) = shared("xprof_tf_gpu_multi_worker_2020") else {
        return;
    };
    let report = check("tf 2020", bytes, 64 * MIB).expect("report");
    assert!(report.modules.is_empty());
    assert!(
        note(&report, "no_plan_in_capture").is_some_and(|t| t.contains("/host:metadata")),
        "{:?}",
        report.notes
    );
    assert!(report
        .diagnosis
        .iter()
        .any(|d| d.id == DiagnosisId::NoPlanInCapture));
}

#[test]
fn a_capture_without_allocator_events_says_why_and_how() {
    let mut space = small_capture();
    space.planes[1] = host_plane(0);
    let report = check("no allocator", space.encode_to_vec(), 8 * MIB).expect("report");
    let d = report
        .diagnosis
        .iter()
        .find(|d| d.id == DiagnosisId::NoAllocatorEvents)
        .expect("no_allocator_events");
    assert!(d.text.contains("XLA_PYTHON_CLIENT_ALLOCATOR"), "{}", d.text);
    // How to record them is the line's fix, not part of its evidence.
    assert!(
        d.fixes
            .iter()
            .any(|f| f.text.contains("jax.profiler.trace")),
        "{:?}",
        d.fixes
    );
    // No host plane at all.
    space.planes.remove(1);
    let report = check("no host plane", space.encode_to_vec(), 8 * MIB).expect("report");
    assert!(report
        .diagnosis
        .iter()
        .any(|d| d.id == DiagnosisId::NoAllocatorEvents));
}

#[test]
fn dropped_events_reported_by_the_profiler_become_a_note() {
    let mut space = small_capture();
    space.warnings.push(
        "Detected GPU events dropped on host0: Profiler has collected 1000000 driver events and 2000000 device events. 1234 events dropped because total number of GPU events reaches max."
            .into(),
    );
    space
        .errors
        .push("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES".into());
    let report = check("dropped events", space.encode_to_vec(), 8 * MIB).expect("report");
    let text = note(&report, "profiler_dropped_events").expect("note");
    assert!(text.contains("1234 events dropped"), "{text}");
    // One sentence, without a run of spaces where a source line was broken.
    assert!(!text.contains("  "), "{text}");
    let text = note(&report, "profiler_messages").expect("note");
    assert!(
        text.contains("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
        "{text}"
    );
}

#[test]
fn a_tpu_capture_without_a_heap_trace_says_so() {
    let mut hlo = module("jit_tpu");
    hlo.buffer_assignment
        .as_mut()
        .unwrap()
        .heap_simulator_traces
        .clear();
    let space = XSpace {
        planes: vec![
            metadata_plane(&[(7, "jit_tpu(7)", hlo.encode_to_vec())]),
            XPlane {
                id: 4,
                name: "/device:TPU:0".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let report = check("tpu no trace", space.encode_to_vec(), 8 * MIB).expect("report");
    let plan = &report.modules[0].plan;
    assert!(!plan.has_heap_trace);
    let text = plan.replay_note.as_deref().expect("note");
    assert!(text.contains("no heap-simulator trace"), "{text}");
    assert_eq!(plan.total_bytes, 256 * 256 * 4 + (6 << 20) + 1024);

    // The shared TPU capture: its small modules have no trace, and say so.
    let Some(bytes) = shared("xprof_tpu_inference_2_clean") else {
        return;
    };
    let report = check("tpu shared", bytes, 64 * MIB).expect("report");
    let without: Vec<_> = report
        .modules
        .iter()
        .filter(|m| !m.plan.has_heap_trace)
        .collect();
    assert!(!without.is_empty());
    for m in without {
        let text = m.plan.replay_note.as_deref().unwrap_or_default();
        assert!(
            text.contains("no heap-simulator trace"),
            "{}: {text}",
            m.label
        );
    }
}

// ---------------------------------------------------------------------------------
// Regression inputs the fuzzers found (tests/corpus/): whole files for the analysis,
// and `hlo/` HloProto bytes for the plan analysis.

fn corpus(sub: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(sub);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn fuzz_regressions_whole_analysis() {
    for path in corpus("analyze") {
        let bytes = std::fs::read(&path).unwrap();
        let n = bytes.len();
        let _ = check(&path.display().to_string(), bytes, 16 * MIB + 8 * n);
    }
}

#[test]
fn fuzz_regressions_plan_analysis() {
    for path in corpus("hlo") {
        let bytes = std::fs::read(&path).unwrap();
        let what = path.display().to_string();
        let r = bounded(&what, TIME_LIMIT, move || {
            HloProto::decode(&bytes[..]).map(|hlo| oomlens::plan::analyze(&hlo).peak_bytes)
        });
        let _ = r.value;
    }
}

// ---------------------------------------------------------------------------------
// The CLI: one line `oomlens: <message>` on stderr, exit status 2.

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oomlens-malformed-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn cli_fails(what: &str, path: &Path, says: &str) {
    cli_fails_with(what, path, &[], says)
}

fn cli_fails_with(what: &str, path: &Path, args: &[&str], says: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_oomlens"))
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
    assert!(out.stdout.is_empty(), "{what}: printed a report");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: {stderr:?}");
    assert!(lines[0].starts_with("oomlens: "), "{what}: {stderr:?}");
    assert!(lines[0].contains(says), "{what}: {stderr:?}");
}

#[test]
fn cli_prints_one_line_and_exits_2_for_unusable_input() {
    let dir = temp_dir("cli");
    // Cut inside its first plane's name: nothing can be read (a file cut later is read
    // up to the cut: tests/truncated.rs).
    let mut truncated = Vec::new();
    truncated.push(0x0a);
    varint(1 << 30, &mut truncated);
    truncated.extend_from_slice(b"\x12\x09/host");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "the file is empty"),
        (
            "gzip",
            b"\x1f\x8b\x08\0\0\0\0\0\0\x03\xcb\x48\xcd\xc9".to_vec(),
            "gzip",
        ),
        ("png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(), "PNG"),
        ("json", br#"{"traceEvents": []}"#.to_vec(), "JSON"),
        ("truncated", truncated, "truncated"),
    ];
    for (what, bytes, says) in cases {
        let path = dir.join(format!("{what}.xplane.pb"));
        std::fs::write(&path, bytes).unwrap();
        cli_fails(what, &path, says);
    }
    let empty_dir = dir.join("logdir");
    std::fs::create_dir_all(empty_dir.join("plugins/profile/2024_01_01_00_00_00")).unwrap();
    std::fs::write(empty_dir.join("notes.txt"), "x").unwrap();
    cli_fails(
        "dir without captures",
        &empty_dir,
        "no *.xplane.pb file under",
    );
    cli_fails(
        "missing path",
        &dir.join("missing.xplane.pb"),
        "cannot open",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
