//! The runtime scan shared between two scanners gives the one-scanner report, for every
//! committed capture and every shared one: the page's host plane in two parts (lines
//! before the split scanned here, lines after it scanned apart, encoded, decoded and
//! merged), and the CLI's two threads racing over every plane.
//!
//! Each ordering the CLI's two threads can meet in, and the device planes' kernel
//! parts, are checked one step at a time by the unit tests of `src/runtime/parallel.rs`.

#[path = "support/real_captures.rs"]
mod real_captures;

use oomlens::analysis::{analyze, prepare, Options};
use oomlens::runtime::{HostParts, Scan, SecondPart};
use oomlens::source::FileSource;

fn report_json(report: oomlens::HostReport) -> String {
    oomlens::report::json::render(&oomlens::report(vec![report]))
}

/// The report as `scan` makes it.
fn report_with(src: &FileSource, scan: Scan) -> String {
    let options = Options {
        scan,
        ..Options::default()
    };
    analyze(src, "host", "capture", &options, &mut |_, _, _| {})
        .map(report_json)
        .expect("analysis succeeds")
}

/// The report as one scanner makes it, to compare the parts' with.
fn one_scanner_report(src: &FileSource) -> String {
    report_with(src, Scan::OneThread)
}

/// Where two reports first differ, for a failure message.
fn first_difference(parts: &str, whole: &str) -> String {
    let at = parts
        .lines()
        .zip(whole.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    let context = |s: &str| {
        s.lines()
            .skip(at.saturating_sub(8))
            .take(12)
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "line {at}:\n--- split ---\n{}\n--- whole ---\n{}",
        context(parts),
        context(whole)
    )
}

#[test]
fn a_host_scan_in_two_parts_gives_the_one_scanner_report() {
    let mut split_captures = 0;
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let options = Options::default();
        let whole = one_scanner_report(&src);

        let prepared =
            prepare(&src, "host", "capture", Some(0), &mut |_, _, _| {}).expect("prepare");
        // Split whatever its size, as the page may.
        let Some(mut parts) = HostParts::plan(prepared.planes(), 0) else {
            continue;
        };
        // The second scanner gets the split and the plane's metadata as bytes, and
        // answers bytes.
        let work = parts.work(prepared.planes()).expect("encode work");
        let second = SecondPart::from_work(&work).expect("decode work");
        assert!(second.fits(&src));
        let answer = second.scan(&src).expect("second part");
        parts
            .scan_first(&src, prepared.planes())
            .expect("first part");
        assert!(parts.receive(&answer), "the answer is for this split");
        let split = prepared
            .finish(&src, Some(parts), &options, &mut |_, _, _| {})
            .map(report_json)
            .expect("finish");
        if split != whole {
            panic!(
                "{}: the split scan differs at {}",
                path.display(),
                first_difference(&split, &whole)
            );
        }
        split_captures += 1;
    }
    assert!(
        split_captures >= 6,
        "only {split_captures} captures had a host plane to split"
    );
}

/// A part missing (the second worker failed) or refused (bytes that are not a part of
/// this split) is scanned here: the report is the same.
#[test]
fn a_missing_or_refused_part_is_scanned_here() {
    let src = real_captures::committed()
        .into_iter()
        .map(|path| FileSource::open(&path).expect("open"))
        .find(|src| {
            let prepared =
                prepare(src, "host", "capture", Some(0), &mut |_, _, _| {}).expect("prepare");
            HostParts::plan(prepared.planes(), 0).is_some()
        })
        .expect("a committed capture with a host plane to split");
    let whole = one_scanner_report(&src);
    let not_parts: [&[u8]; 3] = [
        b"",
        &[0x80; 64],
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
    ];
    for answer in std::iter::once(None).chain(not_parts.map(Some)) {
        let prepared =
            prepare(&src, "host", "capture", Some(0), &mut |_, _, _| {}).expect("prepare");
        let mut parts = HostParts::plan(prepared.planes(), 0).expect("a host plane to split");
        parts
            .scan_first(&src, prepared.planes())
            .expect("first part");
        if let Some(answer) = answer {
            assert!(!parts.receive(answer), "{answer:?} is not a part");
        }
        let split = prepared
            .finish(&src, Some(parts), &Options::default(), &mut |_, _, _| {})
            .map(report_json)
            .expect("finish");
        assert!(split == whole, "{}", first_difference(&split, &whole));
    }
}

#[test]
fn bytes_that_are_not_a_host_part_are_refused() {
    assert!(SecondPart::from_work(b"").is_none());
    assert!(SecondPart::from_work(&[0x80; 64]).is_none());
    assert!(SecondPart::from_work(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff").is_none());
}

/// The CLI's two threads, racing for real: the host plane and the device planes of
/// every real capture shared whatever their size, many times over (the boundary lands
/// wherever the threads meet), and each time the report equals one scanner's.
#[test]
fn two_threads_sharing_every_plane_give_the_one_scanner_report() {
    let everything = Scan::TwoThreads {
        host_from_bytes: 0,
        device_from_bytes: 0,
        cut_from_bytes: 0,
    };
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let whole = one_scanner_report(&src);
        for round in 0..8 {
            let shared = report_with(&src, everything);
            assert!(
                shared == whole,
                "{} (round {round}): two threads differ from one at {}",
                path.display(),
                first_difference(&shared, &whole)
            );
        }
    }
}
