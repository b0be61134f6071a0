//! A truncated capture is read as far as it is whole: the planes before the cut, and of
//! the plane the file ends in, its whole fields and, of a line the file ends in, its
//! whole events. Real captures are cut at many offsets (every plane boundary, inside
//! planes' headers, lines, events and tables), and each partial report must be the
//! report on the capture's whole prefix: a well-formed capture rebuilt here from the
//! fields (and the events of the cut line) that end before the cut. Captures in
//! `../shared/captures` are skipped, saying so, where that folder is absent.

use std::path::{Path, PathBuf};

use serde_json::Value;

// ---------------------------------------------------------------------------------
// Protobuf fields, read by hand (prost would refuse a cut message).

/// A field of a message: where it starts, where its payload starts (length-delimited
/// fields), and where it ends.
#[derive(Debug, Clone, Copy)]
struct Field {
    number: u64,
    start: usize,
    payload: Option<usize>,
    end: usize,
}

fn varint(bytes: &[u8], mut at: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(at)?;
        at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some((value, at));
        }
    }
    None
}

/// The fields of the message `bytes[start..end]` (all whole: these are the uncut
/// captures' bytes).
fn fields(bytes: &[u8], start: usize, end: usize) -> Vec<Field> {
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let (key, after_key) = varint(bytes, at).expect("a key");
        let (payload, field_end) = match key & 7 {
            0 => (None, varint(bytes, after_key).expect("a varint").1),
            1 => (None, after_key + 8),
            5 => (None, after_key + 4),
            2 => {
                let (len, from) = varint(bytes, after_key).expect("a length");
                (Some(from), from + len as usize)
            }
            other => panic!("wire type {other} at {at}"),
        };
        assert!(field_end <= end, "a field past its message at {at}");
        out.push(Field {
            number: key >> 3,
            start: at,
            payload,
            end: field_end,
        });
        at = field_end;
    }
    out
}

fn wrap(number: u64, payload: &[u8], out: &mut Vec<u8>) {
    let mut v = number << 3 | 2;
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    let mut len = payload.len() as u64;
    while len >= 0x80 {
        out.push(len as u8 | 0x80);
        len >>= 7;
    }
    out.push(len as u8);
    out.extend_from_slice(payload);
}

const XSPACE_PLANES: u64 = 1;
const XPLANE_LINES: u64 = 3;

/// The whole fields of `bytes[start..end]` before `cut`; of a field the cut falls in
/// whose key and length are whole, the part `keep_cut` makes of it (if any).
fn whole_before(
    bytes: &[u8],
    start: usize,
    end: usize,
    cut: usize,
    keep_cut: impl Fn(&Field) -> Option<Vec<u8>>,
) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields(bytes, start, end) {
        if f.end <= cut {
            out.extend_from_slice(&bytes[f.start..f.end]);
            continue;
        }
        if f.start < cut && f.payload.is_some_and(|p| p <= cut) {
            if let Some(part) = keep_cut(&f) {
                out.extend_from_slice(&part);
            }
        }
        break;
    }
    out
}

/// The capture's whole prefix at `cut`: the planes before it; of the plane the cut
/// falls in, its whole fields, and of a line the cut falls in, its whole fields
/// (header and events).
fn prefix(bytes: &[u8], cut: usize) -> Vec<u8> {
    whole_before(bytes, 0, bytes.len(), cut, |plane| {
        if plane.number != XSPACE_PLANES {
            return None;
        }
        let from = plane.payload?;
        let body = whole_before(bytes, from, plane.end, cut, |line| {
            if line.number != XPLANE_LINES {
                return None;
            }
            let from = line.payload?;
            let kept = whole_before(bytes, from, line.end, cut, |_| None);
            let mut out = Vec::new();
            wrap(XPLANE_LINES, &kept, &mut out);
            Some(out)
        });
        let mut out = Vec::new();
        wrap(XSPACE_PLANES, &body, &mut out);
        Some(out)
    })
}

/// The capture with each plane's tables (event metadata, stat metadata, stats) moved
/// before its lines. Encoders write them after the lines, so a real capture cut in
/// its lines has lost the names of their events; with the tables first, the events
/// before the cut can be read, which is what the cut line's handling is for.
fn tables_before_lines(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in fields(bytes, 0, bytes.len()) {
        let (XSPACE_PLANES, Some(from)) = (f.number, f.payload) else {
            out.extend_from_slice(&bytes[f.start..f.end]);
            continue;
        };
        let inner = fields(bytes, from, f.end);
        let mut body = Vec::new();
        for pass in [[1u64, 2], [4, 5], [6, 6], [3, 3]] {
            for g in &inner {
                if pass.contains(&g.number) {
                    body.extend_from_slice(&bytes[g.start..g.end]);
                }
            }
        }
        for g in &inner {
            if !(1..=6).contains(&g.number) {
                body.extend_from_slice(&bytes[g.start..g.end]);
            }
        }
        wrap(XSPACE_PLANES, &body, &mut out);
    }
    out
}

// ---------------------------------------------------------------------------------
// Where to cut.

/// Offsets at every top-level boundary (and inside the key and length that follow),
/// and a deterministic sample of offsets inside planes: at and inside their fields'
/// keys, in the middle of fields, and at, inside and in the middle of the events of a
/// sample of lines.
fn cuts(bytes: &[u8], inner: usize) -> Vec<usize> {
    let mut top = Vec::new();
    let mut inside = Vec::new();
    for plane in fields(bytes, 0, bytes.len()) {
        top.extend([plane.start, plane.start + 1, plane.start + 2]);
        let (XSPACE_PLANES, Some(from)) = (plane.number, plane.payload) else {
            continue;
        };
        top.extend([from + 1, from + 4]);
        for f in fields(bytes, from, plane.end) {
            inside.extend([f.start, f.start + 1, (f.start + f.end) / 2]);
            if let (XPLANE_LINES, Some(line_from)) = (f.number, f.payload) {
                for e in fields(bytes, line_from, f.end) {
                    inside.extend([e.start, e.start + 1, (e.start + e.end) / 2]);
                }
            }
        }
    }
    top.push(bytes.len() - 1);
    inside.sort_unstable();
    inside.dedup();
    let step = (inside.len() / inner).max(1);
    let mut all: Vec<usize> = top
        .into_iter()
        .chain(inside.into_iter().step_by(step))
        .filter(|&c| c > 0 && c < bytes.len())
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

// ---------------------------------------------------------------------------------
// Reports compared.

fn analyze(bytes: &[u8]) -> Result<Value, oomlens::Error> {
    let host = oomlens::analyze(
        &bytes.to_vec(),
        "h",
        "h.xplane.pb",
        &oomlens::Options::default(),
        &mut |_, _, _| {},
    )?;
    Ok(oomlens::report::json::to_value(&oomlens::report(vec![
        host,
    ])))
}

/// The report less what must differ between a cut file and its rebuilt prefix: the
/// file's size, the planes' sizes, and the notes on the cut.
fn comparable(mut report: Value) -> Value {
    let top = report.as_object_mut().expect("an object");
    top.remove("file_bytes");
    if let Some(Value::Array(planes)) = top.get_mut("planes") {
        for p in planes {
            p.as_object_mut().expect("a plane").remove("bytes");
        }
    }
    if let Some(Value::Array(notes)) = top.get_mut("notes") {
        notes.retain(|n| !matches!(n["id"].as_str(), Some("capture_truncated")));
    }
    // A cut file's line on missing allocator events says that they may be in the part
    // that was cut, and to copy the file again: the rebuilt prefix, whole, cannot.
    if let Some(Value::Array(lines)) = top.get_mut("diagnosis") {
        for line in lines
            .iter_mut()
            .filter(|l| l["id"] == "no_allocator_events")
        {
            if let Some(line) = line.as_object_mut() {
                for key in ["text", "cause", "fix", "fixes"] {
                    line.remove(key);
                }
            }
        }
    }
    report
}

fn notes(report: &Value) -> Vec<(String, String)> {
    report["notes"]
        .as_array()
        .map(|notes| {
            notes
                .iter()
                .map(|n| {
                    (
                        n["id"].as_str().unwrap_or("").to_owned(),
                        n["text"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How many launches the report's runtime section counts.
fn launches(report: &Value) -> u64 {
    report["runtime"]["execution_count"].as_u64().unwrap_or(0)
}

/// Cuts `bytes` at each offset of [`cuts`] and checks the partial report against the
/// prefix's; returns how many cuts gave a report, and how many of those counted some
/// but not all of the capture's launches.
fn check_cuts(name: &str, bytes: &[u8], inner: usize) -> (usize, usize) {
    let all_launches = launches(&analyze(bytes).expect("the whole capture"));
    let mut some_launches = 0;
    let mut reports = 0;
    let cuts = cuts(bytes, inner);
    assert!(cuts.len() > 20, "{name}: only {} cuts", cuts.len());
    for &cut in &cuts {
        let what = format!("{name} cut at {cut}");
        let partial = analyze(&bytes[..cut]);
        let whole = analyze(&prefix(bytes, cut));
        match (partial, whole) {
            (Ok(partial), Ok(whole)) => {
                reports += 1;
                let notes = notes(&partial);
                // A cut between two top-level fields leaves a well-formed capture.
                let boundary = fields(bytes, 0, bytes.len()).iter().any(|f| f.start == cut);
                let note = notes.iter().find(|(id, _)| id == "capture_truncated");
                match note {
                    Some((_, text)) => assert!(
                        text.contains(&format!("the file has {cut} bytes")),
                        "{what}: {text}"
                    ),
                    None => assert!(boundary, "{what}: no truncation note in {notes:?}"),
                }
                // No damage is reported where the file is only cut.
                assert!(
                    !notes.iter().any(|(id, _)| id == "plane_damaged"),
                    "{what}: {notes:?}"
                );
                let n = launches(&partial);
                if n > 0 && n < all_launches {
                    some_launches += 1;
                }
                let (partial, whole) = (comparable(partial), comparable(whole));
                if partial != whole {
                    let p = serde_json::to_string_pretty(&partial).unwrap();
                    let w = serde_json::to_string_pretty(&whole).unwrap();
                    let first = p
                        .lines()
                        .zip(w.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    panic!(
                        "{what}: the partial report is not the prefix's; first difference at line {first}:\n  cut:    {}\n  prefix: {}",
                        p.lines().nth(first).unwrap_or(""),
                        w.lines().nth(first).unwrap_or("")
                    );
                }
            }
            // Cut inside the first plane's header: nothing to read in either.
            (Err(e), Err(_)) => assert!(
                matches!(e.kind(), "truncated" | "not_a_capture"),
                "{what}: {e}"
            ),
            (Ok(r), Err(e)) => panic!(
                "{what}: a report ({:?}), but the prefix gives {e}",
                notes(&r)
            ),
            (Err(e), Ok(_)) => panic!("{what}: {e}, but the prefix gives a report"),
        }
    }
    eprintln!(
        "{name}: {} cuts, {reports} partial reports, {some_launches} with {all_launches} launches in part",
        cuts.len()
    );
    (reports, some_launches)
}

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .join(format!("{name}.xplane.pb"));
    std::fs::read(path).expect("the fixture")
}

fn shared(name: &str) -> Option<Vec<u8>> {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/captures")
        .join(format!("{name}.xplane.pb"));
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(_) => {
            eprintln!("SKIP: {} is absent", path.display());
            None
        }
    }
}

#[test]
fn cut_cpu_captures_report_their_prefix() {
    for name in ["oom_first_call", "leak_steps", "attention_train"] {
        let bytes = fixture(name);
        assert!(check_cuts(name, &bytes, 150).0 > 100, "{name}");
        let reordered = tables_before_lines(&bytes);
        let (reports, in_part) = check_cuts(&format!("{name} (tables first)"), &reordered, 150);
        assert!(reports > 100 && in_part > 0, "{name}: {reports}, {in_part}");
    }
}

#[test]
fn cut_gpu_and_tpu_captures_report_their_prefix() {
    for name in [
        "tracelens_jax08_gemm_tw003",
        "tracelens_jax08_attention_tw003",
        "xprof_tpu_inference_2_clean",
    ] {
        let Some(bytes) = shared(name) else { continue };
        assert!(check_cuts(name, &bytes, 150).0 > 100, "{name}");
        let reordered = tables_before_lines(&bytes);
        let (reports, in_part) = check_cuts(&format!("{name} (tables first)"), &reordered, 150);
        assert!(
            reports > 100 && in_part > 10,
            "{name}: {reports}, {in_part}"
        );
    }
}

#[test]
fn a_cut_in_the_host_plane_keeps_the_plans_and_says_where() {
    let bytes = fixture("oom_first_call");
    let planes = fields(&bytes, 0, bytes.len());
    // The second plane is /host:CPU; cut in the middle of its lines.
    let host = planes[1];
    let cut = (host.start + host.end) / 2;
    let report = analyze(&bytes[..cut]).expect("a partial report");
    assert_eq!(report["selected_module"], "jit_rank_eval(10)");
    let text = notes(&report)
        .into_iter()
        .find(|(id, _)| id == "capture_truncated")
        .expect("a truncation note")
        .1;
    for says in [
        format!("the file has {cut} bytes"),
        format!("its plane /host:CPU (from byte {})", host.payload.unwrap()),
        format!("runs to byte {}", host.end),
        "ends in that plane's lines".into(),
        "the plane before it".into(),
        "Missing: the rest of its lines".into(),
        "none of the planes read is Task Environment".into(),
    ] {
        assert!(text.contains(&says), "{says:?} not in {text}");
    }
    // Cut in the plans' event metadata: the modules before the cut are kept.
    let metadata = planes[0];
    let entries: Vec<Field> = fields(&bytes, metadata.payload.unwrap(), metadata.end)
        .into_iter()
        .filter(|f| f.number == 4)
        .collect();
    assert!(entries.len() >= 2);
    let cut = entries[1].start + 10;
    let report = analyze(&bytes[..cut]).expect("a partial report");
    let text = notes(&report)
        .into_iter()
        .find(|(id, _)| id == "capture_truncated")
        .expect("a truncation note")
        .1;
    assert!(
        text.contains("ends in that plane's event metadata"),
        "{text}"
    );
}

/// A GPU capture (Reactant on CUDA, with allocator events) cut inside its host plane's
/// lines: its events lose their names, and the report says the allocator events were
/// in the part that was cut, not that JAX was not using its allocator.
#[test]
fn allocator_events_lost_to_a_cut_are_said_to_be_cut() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reactant/cyclops_2025_02_05_11_05_24.xplane.pb");
    let bytes = std::fs::read(path).expect("the capture");
    let whole = analyze(&bytes).expect("the whole capture");
    assert!(!whole["runtime"]["allocators"]
        .as_array()
        .unwrap()
        .is_empty());
    let host = fields(&bytes, 0, bytes.len())
        .into_iter()
        .find(|p| {
            let name = fields(&bytes, p.payload.unwrap(), p.end)
                .into_iter()
                .find(|f| f.number == 2)
                .map(|f| &bytes[f.payload.unwrap()..f.end]);
            name == Some(b"/host:CPU".as_slice())
        })
        .expect("a host plane");
    let lines: Vec<Field> = fields(&bytes, host.payload.unwrap(), host.end)
        .into_iter()
        .filter(|f| f.number == 3)
        .collect();
    let cut = (lines[0].end + lines.last().unwrap().end) / 2;
    let report = analyze(&bytes[..cut]).expect("a partial report");
    let line = report["diagnosis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "no_allocator_events")
        .expect("no allocator events");
    let text = line["text"].as_str().unwrap();
    assert!(text.contains("in the part that was cut"), "{text}");
    assert!(!text.contains("BFC"), "{text}");
    assert!(!text.contains("CPU backend"), "{text}");
}

#[test]
fn a_file_cut_in_its_first_planes_header_is_refused() {
    let bytes = fixture("leak_steps");
    for cut in 1..8 {
        match analyze(&bytes[..cut]) {
            Err(e) => assert!(matches!(e.kind(), "truncated" | "not_a_capture"), "{e}"),
            Ok(r) => panic!("cut at {cut}: a report {:?}", notes(&r)),
        }
    }
}
