//! The host scan in two parts, as the page's two workers do it: lines before the split
//! scanned here, lines after it scanned apart, encoded, decoded and merged. The report
//! must equal the one-scanner report, for every committed capture and every shared one.

#[path = "support/real_captures.rs"]
mod real_captures;

use oomlens::analysis::{analyze, prepare, Options};
use oomlens::capture::LineBoundary;
use oomlens::runtime::scan::{LineMarks, RuntimeScan};
use oomlens::runtime::{
    decode_host_part, decode_host_work, encode_host_part, encode_host_work, host_split,
    merge_host_parts, scan_devices, scan_host_lines, scan_host_share, scan_host_sharing, SharePart,
    DEVICE_PLANE_PREFIX, HOST_PLANE,
};
use oomlens::source::FileSource;

fn report_json(report: oomlens::HostReport) -> String {
    oomlens::report::json::render(&oomlens::report(vec![report]))
}

/// The report as one scanner makes it, to compare the parts' with.
fn one_scanner_report(src: &FileSource) -> String {
    analyze(
        src,
        "host",
        "capture",
        &Options::default(),
        &mut |_, _, _| {},
    )
    .map(report_json)
    .expect("analysis succeeds")
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
        let Some((index, split)) = host_split(prepared.planes(), 0) else {
            continue;
        };
        let plane = &prepared.planes()[index];
        let first = scan_host_lines(&src, plane, split.first_lines()).expect("first part");
        // The second scanner gets the split and the plane's metadata as bytes.
        let work = encode_host_work(&split, plane).expect("encode work");
        let (work_split, their_plane) = decode_host_work(&work).expect("decode work");
        assert_eq!(work_split, split);
        let second =
            scan_host_lines(&src, &their_plane, split.second_lines()).expect("second part");
        let bytes = encode_host_part(&split, &second).expect("encode");
        let (split_back, second) = decode_host_part(&bytes).expect("decode");
        assert_eq!(split_back, split);
        let scan = merge_host_parts(first, second);
        let parts = prepared
            .finish(&src, scan, &options, &mut |_, _, _| {})
            .map(report_json)
            .expect("finish");
        if parts != whole {
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
            panic!(
                "{}: the split scan differs at line {at}:\n--- split ---\n{}\n--- whole ---\n{}",
                path.display(),
                context(&parts),
                context(&whole)
            );
        }
        split_captures += 1;
    }
    assert!(
        split_captures >= 6,
        "only {split_captures} captures had a host plane to split"
    );
}

#[test]
fn bytes_that_are_not_a_host_part_are_refused() {
    assert!(decode_host_work(b"").is_none());
    assert!(decode_host_work(&[0x80; 64]).is_none());
    assert!(decode_host_part(b"").is_none());
    assert!(decode_host_part(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff").is_none());
}

/// A fresh scan for one host plane.
fn fresh_scan() -> RuntimeScan {
    let mut scan = RuntimeScan::default();
    scan.line_marks.push(LineMarks::default());
    scan
}

/// The host plane shared by two scanners without an index of its lines, as the CLI
/// does it on two threads: the second walks line headers to the middle and scans from
/// there, the first scans up to where the second started. Run here one after the
/// other, in both orders the threads can meet: the second sets the boundary before the
/// first starts, or after the first has passed the middle (then the boundary moves on
/// to the first line the first scanner has not started). Either way every line is
/// scanned once, the second walk confirms the tables read from the plane's end, and
/// the report equals the one-scanner report.
#[test]
fn a_host_plane_shared_without_an_index_gives_the_one_scanner_report() {
    let mut shared = 0;
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let options = Options::default();
        let whole = one_scanner_report(&src);
        let prepared = prepare(&src, "host", "capture", None, &mut |_, _, _| {}).expect("prepare");
        let host = |prepared: &oomlens::analysis::Prepared| {
            let hosts: Vec<usize> = (0..prepared.planes().len())
                .filter(|&i| prepared.planes()[i].name == HOST_PLANE)
                .collect();
            match hosts[..] {
                [one] => Some(one),
                _ => None,
            }
        };
        if host(&prepared).is_none() {
            continue;
        }
        let lines = oomlens::capture::Plane::open(
            &src,
            &oomlens::capture::CaptureIndex::scan(&src)
                .expect("index")
                .planes
                .into_iter()
                .find(|p| p.name == HOST_PLANE)
                .expect("host plane"),
        )
        .expect("walk")
        .line_count;
        if lines < 4 {
            continue;
        }
        // Lines with events, as one scanner counts them.
        let whole_lines = oomlens::runtime::scan_host(&src, prepared.planes())
            .expect("one scanner")
            .host_lines;
        for first_ahead in [false, true] {
            let mut prepared =
                prepare(&src, "host", "capture", None, &mut |_, _, _| {}).expect("prepare");
            let plane = &prepared.planes()[host(&prepared).expect("host plane")];
            let boundary = LineBoundary::default();
            let first_started = lines * 3 / 4;
            if first_ahead {
                // The first scanner has started every line up to three quarters in.
                for line in 0..first_started {
                    assert!(boundary.first_takes(line));
                }
            }
            let second = scan_host_share(&src, plane, &boundary, SharePart::Second, fresh_scan())
                .expect("second part");
            let at = boundary
                .boundary()
                .expect("the second scanner sets the boundary");
            if first_ahead {
                // Not on a line the first scanner has started.
                assert!(at >= first_started && at <= lines, "{}", path.display());
            } else {
                assert!(
                    at > 0 && at < lines,
                    "{}: boundary {at} of {lines}",
                    path.display()
                );
            }
            let first = scan_host_share(&src, plane, &boundary, SharePart::First, fresh_scan())
                .expect("first part");
            assert_eq!(
                first.host_lines + second.host_lines,
                whole_lines,
                "{}: every line once",
                path.display()
            );
            assert!(
                !prepared.confirm_tables(&src).expect("confirm"),
                "{}: the second walk confirms the tables",
                path.display()
            );
            let scan = merge_host_parts(first, second);
            let parts = prepared
                .finish(&src, scan, &options, &mut |_, _, _| {})
                .map(report_json)
                .expect("finish");
            assert!(
                parts == whole,
                "{}: the shared scan (first ahead: {first_ahead}) differs from the whole",
                path.display()
            );
        }
        shared += 1;
    }
    assert!(
        shared >= 6,
        "only {shared} captures had a host plane to share"
    );
}

/// Device planes shared by two threads (when every launch names its module, so the
/// order kernels are matched in cannot matter) find what one scanner finds: kernel
/// counts, which launches ran kernels and their programs, module names in order, line
/// counts. Shared here whatever the plane's size.
#[test]
fn device_planes_shared_by_two_threads_match_kernels_as_one_scanner_does() {
    let mut shared = 0;
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let devices: Vec<_> = oomlens::capture::CaptureIndex::scan(&src)
            .expect("index")
            .planes
            .into_iter()
            .filter(|p| p.name.starts_with(DEVICE_PLANE_PREFIX))
            .collect();
        if devices.is_empty() {
            continue;
        }
        let mut prepared =
            prepare(&src, "host", "capture", None, &mut |_, _, _| {}).expect("prepare");
        let host = prepared.scan_host(&src).expect("host scan");
        let any_order = host.kernels_match_in_any_order();
        let one = scan_devices(&src, &devices, host, None).expect("one scanner");
        let host = prepared.scan_host(&src).expect("host scan");
        let two = scan_devices(&src, &devices, host, Some(0)).expect("two threads");
        let what = |scan: &RuntimeScan| {
            format!(
                "kernels {}\nlaunches {:?}\nmodules {:?}\nlines {:?}\nmemory {:?}",
                scan.kernels,
                scan.executions,
                scan.module_names,
                scan.device_line_counts,
                scan.device_memory_bytes
            )
        };
        assert_eq!(what(&two), what(&one), "{}", path.display());
        if any_order && one.kernels > 0 {
            shared += 1;
        }
    }
    assert!(shared >= 3, "only {shared} captures had kernels to share");
}

/// The CLI's two threads, racing for real: the host plane and the device planes of
/// every real capture shared whatever their size, many times over (the boundary lands
/// wherever the threads meet), and each time the report equals one scanner's.
#[test]
fn two_threads_sharing_every_plane_give_the_one_scanner_report() {
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let whole = one_scanner_report(&src);
        for round in 0..8 {
            let mut prepared =
                prepare(&src, "host", "capture", None, &mut |_, _, _| {}).expect("prepare");
            let mut scan = scan_host_sharing(&src, prepared.planes(), Some(0)).expect("host");
            if prepared.confirm_tables(&src).expect("confirm") {
                scan = scan_host_sharing(&src, prepared.planes(), Some(0)).expect("again");
            }
            let shared = prepared
                .finish_sharing(&src, scan, &Options::default(), Some(0), &mut |_, _, _| {})
                .map(report_json)
                .expect("finish");
            assert!(
                shared == whole,
                "{} (round {round}): two threads differ from one",
                path.display()
            );
        }
    }
}
