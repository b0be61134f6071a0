//! The host scan in two parts, as the page's two workers do it: lines before the split
//! scanned here, lines after it scanned apart, encoded, decoded and merged. The report
//! must equal the one-scanner report, for every committed capture and every shared one.

#[path = "support/real_captures.rs"]
mod real_captures;

use oomlens::analysis::{analyze, prepare, Options};
use oomlens::runtime::{
    decode_host_part, decode_host_work, encode_host_part, encode_host_work, host_split,
    merge_host_parts, scan_host_lines,
};
use oomlens::source::FileSource;

fn report_json(report: oomlens::HostReport) -> String {
    oomlens::report::json::render(&oomlens::report(vec![report]))
}

#[test]
fn a_host_scan_in_two_parts_gives_the_one_scanner_report() {
    let mut split_captures = 0;
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let options = Options::default();
        let whole = analyze(&src, "host", "capture", &options, &mut |_, _, _| {})
            .map(report_json)
            .expect("analysis succeeds");

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
