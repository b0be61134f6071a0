//! A host plane's tables (event and stat names) read from the plane's end, before its
//! lines, are the tables a walk of its lines meets; where the guess from the end is
//! wrong, the walk refutes it and the plane is read again, so the report is the same.

#[path = "support/real_captures.rs"]
mod real_captures;
#[path = "support/wire.rs"]
mod wire;

use std::collections::BTreeMap;

use oomlens::analysis::{analyze, prepare, Options};
use oomlens::capture::{CaptureIndex, Event, EventVisitor, LineInfo, Plane};
use oomlens::runtime::Scan;
use oomlens::source::{ByteSource, FileSource};
use wire::field;

const HOST: &str = "/host:CPU";

struct Walk;

impl EventVisitor for Walk {
    fn event(&mut self, _line: &LineInfo, _event: &Event<'_>) {}
}

/// A plane's tables in a comparable form.
fn tables(plane: &Plane) -> String {
    let events: BTreeMap<i64, (&str, &str, usize)> = plane
        .event_metadata
        .iter()
        .map(|(id, m)| {
            (
                *id,
                (m.name.as_str(), m.display_name.as_str(), m.stats.len()),
            )
        })
        .collect();
    let stats: BTreeMap<u64, &str> = plane
        .stat_names
        .iter()
        .map(|(id, n)| (*id, n.as_str()))
        .collect();
    format!(
        "{} {} {events:?} {stats:?} {}",
        plane.id,
        plane.name,
        plane.stats.len()
    )
}

/// The report with the host plane's tables read from its end (`None`) or by walking
/// its lines first (`Some(0)`: every plane's lines indexed up front).
fn report(src: &dyn ByteSource, split_from: Option<u64>) -> String {
    let prepared = prepare(src, "host", "capture", split_from, &mut |_, _, _| {}).expect("prepare");
    let report = prepared
        .finish(src, None, &Options::default(), &mut |_, _, _| {})
        .expect("finish");
    oomlens::report::json::render(&oomlens::report(vec![report]))
}

#[test]
fn tables_read_from_the_end_are_the_tables_the_walk_meets() {
    let files = real_captures::all();
    assert!(files.len() >= 6, "captures found: {files:?}");
    let mut host_planes = 0;
    for path in &files {
        let src = FileSource::open(path).expect("open");
        let index = CaptureIndex::scan(&src).expect("index");
        for at in index.find(HOST) {
            host_planes += 1;
            let walked = Plane::open(&src, at).expect("open");
            let mut first = Plane::open_tables_first(&src, at).expect("open tables first");
            assert!(
                first.tables_unconfirmed(),
                "{}: the tables were not found from the end",
                path.display()
            );
            assert_eq!(tables(&first), tables(&walked), "{}", path.display());
            assert_eq!(first.line_count, 0, "lines are not known before the walk");
            first.visit_events(&src, &mut Walk).expect("walk");
            assert!(first.confirm_tables(), "{}", path.display());
            assert_eq!(first.line_count, walked.line_count, "{}", path.display());
            assert_eq!(first.lines, walked.lines, "{}", path.display());
        }
        assert_eq!(
            report(&src, None),
            report(&src, Some(0)),
            "{}",
            path.display()
        );
    }
    assert!(host_planes >= files.len(), "host planes: {host_planes}");
}

// Wire-level surgery on a real capture's host plane.

fn read_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0;
    for shift in (0..64).step_by(7) {
        let b = bytes[*at];
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
    }
    value
}

/// The fields of a message: (field number, the field's bytes, key included).
fn fields(bytes: &[u8]) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let key = read_varint(bytes, &mut at);
        match key & 7 {
            0 => {
                read_varint(bytes, &mut at);
            }
            1 => at += 8,
            2 => {
                let len = read_varint(bytes, &mut at) as usize;
                at += len;
            }
            5 => at += 4,
            other => panic!("wire type {other}"),
        }
        out.push((key >> 3, bytes[start..at].to_vec()));
    }
    out
}

/// A plane's fields laid out again: (header 1–2, lines 3, tables 4–6) in, fields out.
type Layout<'a> = &'a dyn Fn(Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<Vec<u8>>) -> Vec<Vec<u8>>;

/// The capture with its host plane's fields laid out again by `layout`.
fn rewrite_host_plane(
    capture: &[u8],
    layout: impl Fn(Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<Vec<u8>>) -> Vec<Vec<u8>>,
) -> Vec<u8> {
    rewrite_planes(capture, &|name| name.ends_with(HOST.as_bytes()), &layout)
}

/// The capture with the fields of each plane whose name `which` picks laid out again
/// by `layout`.
fn rewrite_planes(capture: &[u8], which: &dyn Fn(&[u8]) -> bool, layout: Layout<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rewrote = false;
    for (number, top) in fields(capture) {
        let payload = &payload_of(&top);
        let picked = number == 1 && fields(payload).iter().any(|(n, f)| *n == 2 && which(f));
        if !picked {
            out.extend(top);
            continue;
        }
        let (mut header, mut lines, mut tables) = (Vec::new(), Vec::new(), Vec::new());
        for (n, f) in fields(payload) {
            match n {
                1 | 2 => header.push(f),
                3 => lines.push(f),
                _ => tables.push(f),
            }
        }
        assert!(lines.len() >= 2 && !tables.is_empty());
        let plane: Vec<u8> = layout(header, lines, tables).concat();
        out.extend(field(1, &plane));
        rewrote = true;
    }
    assert!(rewrote, "no plane to rewrite");
    out
}

/// The payload of a length-delimited field whose key is one byte (a plane, a line).
fn payload_of(bytes: &[u8]) -> Vec<u8> {
    let mut at = 1;
    let len = read_varint(bytes, &mut at) as usize;
    bytes[at..at + len].to_vec()
}

/// A plane laid out with its last line ending in an "event" that reads as an event
/// metadata entry, so that the run of table fields seems to start inside that line:
/// a guess of where the tables start that is too early.
fn entry_in_last_line(
    header: Vec<Vec<u8>>,
    mut lines: Vec<Vec<u8>>,
    tables: Vec<Vec<u8>>,
) -> Vec<Vec<u8>> {
    let mut entry = Vec::new();
    entry.extend([0x08, 0x7f]);
    entry.extend(field(2, &[0x08, 0x7f, 0x12, 0x01, b'x']));
    let mut payload = payload_of(&lines.pop().expect("a line"));
    payload.extend(field(4, &entry));
    lines.push(field(3, &payload));
    [header, lines, tables].concat()
}

/// Reads the rewritten capture's host plane tables-first and walks it: whether the
/// tables were taken from the end, and whether the walk confirmed them.
fn guess_and_walk(capture: &[u8]) -> (bool, bool) {
    let src: &dyn ByteSource = &capture;
    let index = CaptureIndex::scan(src).expect("index");
    let at = index.find(HOST).next().expect("host plane");
    let mut plane = Plane::open_tables_first(src, at).expect("open");
    let guessed = plane.tables_unconfirmed();
    plane.visit_events(src, &mut Walk).expect("walk");
    (guessed, plane.confirm_tables())
}

#[test]
fn wrong_guesses_are_refuted_by_the_walk_and_the_report_is_unchanged() {
    let captures = real_captures::committed();
    assert!(!captures.is_empty());
    let original = std::fs::read(&captures[0]).expect("read");

    // A line after the tables, and an unknown field after the tables: no run of table
    // fields reaches the end from where the lines end.
    let line_after = rewrite_host_plane(&original, |header, mut lines, tables| {
        let last = lines.pop().expect("a line");
        [header, lines, tables, vec![last]].concat()
    });
    let unknown_after = rewrite_host_plane(&original, |header, lines, tables| {
        [header, lines, tables, vec![field(7, b"future")]].concat()
    });
    // Tables before the lines.
    let tables_before = rewrite_host_plane(&original, |header, lines, tables| {
        [header, tables, lines].concat()
    });
    let entry_in_line = rewrite_host_plane(&original, entry_in_last_line);

    for (what, capture) in [
        ("a line after the tables", &line_after),
        ("an unknown field after the tables", &unknown_after),
        ("tables before the lines", &tables_before),
        ("a table entry inside the last line", &entry_in_line),
    ] {
        let (guessed, confirmed) = guess_and_walk(capture);
        assert!(guessed, "{what}: a guess is made");
        assert!(!confirmed, "{what}: the walk refutes the guess");
        let src: &dyn ByteSource = &capture.as_slice();
        assert_eq!(report(src, None), report(src, Some(0)), "{what}");
    }
}

/// A run of TPU planes shared by two threads opens each plane by its tables, read from
/// its end (`parallel/deferred.rs`). Where that guess is wrong, the walk that hands the
/// plane's lines over refutes it, the run is read again in one walk, and the report
/// is the one-thread report.
#[test]
fn tpu_planes_whose_tables_are_not_where_they_seem_are_read_again() {
    let shared = Scan::TwoThreads {
        host_from_bytes: u64::MAX,
        device_from_bytes: 0,
        cut_from_bytes: 0,
    };
    let mut tried = 0;
    for path in real_captures::all() {
        let original = std::fs::read(&path).expect("read");
        let src: &dyn ByteSource = &original.as_slice();
        let index = CaptureIndex::scan(src).expect("index");
        if index
            .planes
            .iter()
            .filter(|p| p.name.contains("TPU"))
            .count()
            < 2
        {
            continue;
        }
        let rewritten = rewrite_planes(
            &original,
            &|name| name.windows(3).any(|w| w == b"TPU"),
            &entry_in_last_line,
        );
        let src: &dyn ByteSource = &rewritten.as_slice();
        let index = CaptureIndex::scan(src).expect("index");
        for at in index.planes.iter().filter(|p| p.name.contains("TPU")) {
            let plane = Plane::open_tables_first(src, at).expect("open");
            assert!(plane.tables_unconfirmed(), "a guess is made");
            plane.visit_events(src, &mut Walk).expect("walk");
            assert_eq!(plane.walked_line_count(), None, "the walk refutes it");
        }
        let (two, one) = shared_and_one_thread(&rewritten, shared, &format!("tpu-{tried}"));
        assert_eq!(two, one, "{}", path.display());
        tried += 1;
    }
    assert!(tried >= 1, "no capture had a run of TPU planes");
}

/// The reports of `capture`, read from a file (as the CLI reads it, so that planes can be
/// shared by two threads), as `shared` makes it and on one thread.
fn shared_and_one_thread(capture: &[u8], shared: Scan, tag: &str) -> (String, String) {
    let file = std::env::temp_dir().join(format!(
        "oomlens-tables-{}-{tag}.xplane.pb",
        std::process::id()
    ));
    std::fs::write(&file, capture).expect("write");
    let src = FileSource::open(&file).expect("open");
    let reports = (
        report_with(&src, shared),
        report_with(&src, Scan::OneThread),
    );
    let _ = std::fs::remove_file(&file);
    reports
}

/// The report as `scan` makes it.
fn report_with(src: &FileSource, scan: Scan) -> String {
    let options = Options {
        scan,
        ..Options::default()
    };
    let report = analyze(src, "host", "capture", &options, &mut |_, _, _| {}).expect("analyze");
    oomlens::report::json::render(&oomlens::report(vec![report]))
}

/// A device plane read by one thread and too large to walk twice cheaply (from 32 MiB,
/// `ALONE_TABLES_FIRST_FROM` in `runtime/scan.rs`) takes its tables from its end and is
/// read in one walk. Where the walk confirms them, and where it refutes them (what the
/// walk read is then undone and the plane read again), the report is the one of the
/// same plane without the line that makes it large (opened by walking it, as planes
/// below 32 MiB are).
#[test]
fn large_device_planes_read_by_one_thread_take_their_tables_from_the_end() {
    let first_tpu = |name: &[u8]| name.ends_with(b"TPU:0");
    // A line of 33 MiB ahead of the others: a field no reader knows, which the walk
    // steps over.
    let padded = |header, lines: Vec<Vec<u8>>, tables| {
        let mut padding = field(2, b"padding");
        padding.extend(field(15, &vec![0u8; 33 << 20]));
        [header, vec![field(3, &padding)], lines, tables].concat()
    };
    let mut tried = 0;
    for path in real_captures::all() {
        let original = std::fs::read(&path).expect("read");
        let src: &dyn ByteSource = &original.as_slice();
        let index = CaptureIndex::scan(src).expect("index");
        if !index.planes.iter().any(|p| first_tpu(p.name.as_bytes())) {
            continue;
        }
        let misleading = rewrite_planes(&original, &first_tpu, &entry_in_last_line);
        for (what, small, confirmed) in [
            ("as written", &original, true),
            ("a table entry inside the last line", &misleading, false),
        ] {
            let capture = &rewrite_planes(small, &first_tpu, &padded);
            let src: &dyn ByteSource = &capture.as_slice();
            let index = CaptureIndex::scan(src).expect("index");
            let at = index.planes.iter().find(|p| first_tpu(p.name.as_bytes()));
            let at = at.expect("the first TPU plane");
            assert!(at.len >= 33 << 20, "{what}: the plane is large");
            let mut plane = Plane::open_tables_first(src, at).expect("open");
            assert!(plane.tables_unconfirmed(), "{what}: a guess is made");
            plane.visit_events(src, &mut Walk).expect("walk");
            assert_eq!(plane.confirm_tables(), confirmed, "{what}");

            let (guessed, reference) = (
                report_from_file(capture, tried),
                report_from_file(small, tried),
            );
            assert_eq!(guessed, reference, "{}: {what}", path.display());
            tried += 1;
        }
    }
    assert!(tried >= 2, "no capture had a TPU plane");
}

/// The one-thread report of `capture`, read from a file, without what the padding
/// changes: the file's size and the planes' sizes and line counts.
fn report_from_file(capture: &[u8], n: usize) -> String {
    let file = std::env::temp_dir().join(format!(
        "oomlens-large-plane-{}-{n}.xplane.pb",
        std::process::id()
    ));
    std::fs::write(&file, capture).expect("write");
    let src = FileSource::open(&file).expect("open");
    let report = report_with(&src, Scan::OneThread);
    let _ = std::fs::remove_file(&file);
    let mut report: serde_json::Value = serde_json::from_str(&report).expect("json");
    assert_eq!(
        report["file_bytes"],
        capture.len() as u64,
        "the file's size"
    );
    assert!(report["planes"].as_array().is_some_and(|p| !p.is_empty()));
    report["file_bytes"] = serde_json::Value::Null;
    report["planes"] = serde_json::Value::Null;
    report.to_string()
}

/// A GPU plane whose kernels two threads match is opened by its tables, read from its
/// end. Where the walk refutes that guess, nothing taken from the guessed tables stays in
/// the report: not even the device's memory, a plane stat (`memory_size`) that a
/// misleading guess can hold. Here the last line ends in fields that also read as a
/// table entry and a plane stat of 1 PiB; the two-thread report must be the one-thread
/// report (that plane walked, as planes below 32 MiB are).
#[test]
fn a_refuted_guess_leaves_no_device_memory_behind() {
    let shared = Scan::TwoThreads {
        host_from_bytes: u64::MAX,
        device_from_bytes: 0,
        cut_from_bytes: 0,
    };
    let first_gpu = |name: &[u8]| name.ends_with(b"/device:GPU:0");
    let bogus: u64 = 1 << 50;
    let mut tried = 0;
    for path in real_captures::all() {
        let original = std::fs::read(&path).expect("read");
        let src: &dyn ByteSource = &original.as_slice();
        let index = CaptureIndex::scan(src).expect("index");
        let Some(at) = index.planes.iter().find(|p| first_gpu(p.name.as_bytes())) else {
            continue;
        };
        let walked = Plane::open(src, at).expect("open");
        if walked.line_count < 2 {
            continue;
        }
        let Some(memory_size) = walked
            .stat_names
            .iter()
            .find(|(_, name)| name.as_str() == "memory_size")
            .map(|(id, _)| *id)
        else {
            continue;
        };
        assert_ne!(
            walked
                .plane_stat("memory_size")
                .and_then(|v| v.as_ref())
                .and_then(|v| v.as_u64()),
            Some(bogus)
        );
        // The table entry makes the guess start inside the last line; the stat after it
        // is then taken for one of the plane's.
        let misleading = |header, lines, tables: Vec<Vec<u8>>| {
            let mut stat = Vec::new();
            wire::varint(1 << 3, &mut stat);
            wire::varint(memory_size, &mut stat);
            wire::varint(3 << 3, &mut stat);
            wire::varint(bogus, &mut stat);
            let mut fields = entry_in_last_line(header, lines, Vec::new());
            let mut payload = payload_of(&fields.pop().expect("the last line"));
            payload.extend(field(6, &stat));
            fields.push(field(3, &payload));
            fields.extend(tables);
            fields
        };
        let rewritten = rewrite_planes(&original, &first_gpu, &misleading);
        let src: &dyn ByteSource = &rewritten.as_slice();
        let index = CaptureIndex::scan(src).expect("index");
        let at = index.planes.iter().find(|p| first_gpu(p.name.as_bytes()));
        let mut guessed = Plane::open_tables_first(src, at.expect("the plane")).expect("open");
        assert!(guessed.tables_unconfirmed(), "a guess is made");
        assert_eq!(
            guessed
                .plane_stat("memory_size")
                .and_then(|v| v.as_ref())
                .and_then(|v| v.as_u64()),
            Some(bogus),
            "{}: the guess holds the misleading stat",
            path.display()
        );
        guessed.visit_events(src, &mut Walk).expect("walk");
        assert!(!guessed.confirm_tables(), "the walk refutes the guess");

        let (two, one) = shared_and_one_thread(&rewritten, shared, &format!("gpu-{tried}"));
        assert!(!two.contains(&bogus.to_string()), "{}", path.display());
        assert_eq!(two, one, "{}", path.display());
        tried += 1;
    }
    assert!(tried >= 1, "no capture had a GPU plane stating its memory");
}
