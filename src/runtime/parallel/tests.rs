//! Two scanners one step at a time, on every real capture: the host plane shared in both
//! orders the threads can meet in, and device planes matched in two kernel parts. (The
//! threads racing for real, and the page's parts, are in `tests/split_scan.rs`.)

use super::*;
use crate::analysis::{analyze, prepare, Options, Prepared};
use crate::capture::{CaptureIndex, PlaneRef};
use crate::real_captures;
use crate::runtime::parts::HostParts;
use crate::runtime::scan::{scan_devices, scan_host_planes};
use crate::runtime::{DEVICE_PLANE_PREFIX, HOST_PLANE};
use crate::source::FileSource;

fn report_json(report: crate::HostReport) -> String {
    crate::report::json::render(&crate::report(vec![report]))
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

/// The report as one scanner makes it.
fn one_scanner_report(src: &FileSource) -> String {
    report_with(src, Scan::OneThread)
}

fn prepared(src: &FileSource) -> Prepared {
    prepare(src, "host", "capture", None, &mut |_, _, _| {}).expect("prepare")
}

/// The place of the capture's host plane among the prepared planes, if it has one.
fn only_host(prepared: &Prepared) -> Option<usize> {
    let mut hosts =
        (0..prepared.planes().len()).filter(|&i| prepared.planes()[i].name == HOST_PLANE);
    let one = hosts.next()?;
    hosts.next().is_none().then_some(one)
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
        let whole = one_scanner_report(&src);
        let once = prepared(&src);
        let Some(host) = only_host(&once) else {
            continue;
        };
        let lines = once.planes()[host].reopen(&src).expect("walk").line_count;
        if lines < 4 {
            continue;
        }
        // Lines with events, as one scanner counts them.
        let whole_lines = scan_host_planes(&src, once.planes(), Scan::OneThread)
            .expect("one scanner")
            .host_lines;
        for first_ahead in [false, true] {
            let prepared = prepared(&src);
            let plane = &prepared.planes()[host];
            let boundary = LineBoundary::default();
            let first_started = lines * 3 / 4;
            if first_ahead {
                // The first scanner has started every line up to three quarters in.
                for line in 0..first_started {
                    assert!(boundary.first_takes(line));
                }
            }
            let fresh = RuntimeScan::for_one_host_plane;
            let second = scan_host_part(&src, plane, &boundary, SharePart::Second, fresh())
                .expect("second part");
            let at = boundary
                .boundary()
                .expect("the second scanner sets the boundary");
            if first_ahead {
                // Not on a line the first scanner has started.
                assert!(at >= first_started && at <= lines, "{}", path.display());
            } else {
                // At `lines` when the lines are too small to be worth the split (the
                // walk counts a kilobyte of work per line header): the first scanner
                // then takes them all.
                assert!(
                    at > 0 && at <= lines,
                    "{}: boundary {at} of {lines}",
                    path.display()
                );
            }
            let first = scan_host_part(&src, plane, &boundary, SharePart::First, fresh())
                .expect("first part");
            assert_eq!(
                first.host_lines + second.host_lines,
                whole_lines,
                "{}: every line once",
                path.display()
            );
            assert!(
                plane.clone().confirm_tables(),
                "{}: the second walk confirms the tables",
                path.display()
            );
            let parts = HostParts::scanned(host, first, second);
            let report = prepared
                .finish(&src, Some(parts), &Options::default(), &mut |_, _, _| {})
                .map(report_json)
                .expect("finish");
            assert!(
                report == whole,
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
/// counts. Shared here whatever the plane's size, and again by plane: every plane in a
/// run shared by plane, whose last plane is split off and shared by segments where
/// that balances the two threads better.
#[test]
fn device_planes_shared_by_two_threads_match_kernels_as_one_scanner_does() {
    let each_shared = Scan::TwoThreads {
        host_from_bytes: u64::MAX,
        device_from_bytes: 0,
        cut_from_bytes: 0,
    };
    let (mut shared, mut split_off) = (0, 0);
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let devices: Vec<PlaneRef> = CaptureIndex::scan(&src)
            .expect("index")
            .planes
            .into_iter()
            .filter(|p| p.name.starts_with(DEVICE_PLANE_PREFIX))
            .collect();
        if devices.is_empty() {
            continue;
        }
        let prepared = prepared(&src);
        let host = || scan_host_planes(&src, prepared.planes(), Scan::OneThread).expect("host");
        let any_order = host().kernels_match_in_any_order();
        let devices_with = |how: Scan| {
            scan_devices(&src, &devices, host(), how, &mut |_, _, _| {}).expect("devices")
        };
        let one = what_devices_give(&devices_with(Scan::OneThread));
        let two = what_devices_give(&devices_with(each_shared));
        assert_eq!(two, one, "{}", path.display());
        // Planes no larger than the largest, or than the one after it: those in a run
        // shared by plane (a larger one first on its own, where it comes first).
        let mut lens: Vec<u64> = devices.iter().map(|p| p.len).collect();
        lens.sort_unstable();
        for below in [lens.last(), lens.iter().rev().nth(1)]
            .into_iter()
            .flatten()
        {
            let by_plane = Scan::TwoThreads {
                host_from_bytes: u64::MAX,
                device_from_bytes: below + 1,
                cut_from_bytes: 0,
            };
            let two = what_devices_give(&devices_with(by_plane));
            assert_eq!(two, one, "{} ({by_plane:?})", path.display());
            let run: Vec<PlaneRef> = (devices.iter())
                .skip_while(|p| p.len > *below)
                .take_while(|p| p.len <= *below && !p.name.contains("TPU"))
                .cloned()
                .collect();
            split_off += usize::from(any_order && split_off_last(&run, 0).1.is_some());
        }
        if any_order && !one.starts_with("kernels 0\n") {
            shared += 1;
        }
    }
    assert!(shared >= 3, "only {shared} captures had kernels to share");
    assert!(split_off >= 1, "no run had its last plane split off");
}

/// What a device scan found, to compare scans by.
fn what_devices_give(scan: &RuntimeScan) -> String {
    format!(
        "kernels {}\nlaunches {:?}\nmodules {:?}\nlines {:?}\nmemory {:?}\n\
         per plane {:?}\nevents {}\nlast {:?}\ndevice launches {:?}",
        scan.kernels,
        scan.executions,
        scan.module_names,
        scan.device_line_counts,
        scan.device_memory_bytes,
        scan.device_kernel_counts,
        scan.device_events,
        scan.last_kernel_ps,
        scan.device_executions,
    )
}

/// Runs of device planes shared by plane are cut into two runs of about the same
/// bytes, neither empty.
#[test]
fn plane_runs_are_cut_into_two_runs_of_about_the_same_bytes() {
    let planes = |lens: &[u64]| -> Vec<PlaneRef> {
        lens.iter()
            .map(|&len| PlaneRef {
                name: "/device:TPU:0".into(),
                offset: 0,
                len,
                damage: Default::default(),
                cut: None,
            })
            .collect()
    };
    assert_eq!(balanced_split(&planes(&[40, 40])), 1);
    assert_eq!(balanced_split(&planes(&[40, 40, 40])), 1);
    assert_eq!(balanced_split(&planes(&[10, 10, 10, 30])), 3);
    assert_eq!(balanced_split(&planes(&[100, 1, 1, 1])), 1);
    assert_eq!(balanced_split(&planes(&[1, 1, 1, 100])), 3);
    assert_eq!(balanced_split(&planes(&[0, 0])), 1);

    // Seven alike: one thread would read four while the other reads three; six are
    // shared by plane and the last by segments. Two, or an even split, stay as they are.
    let mib = |lens: &[u64]| planes(&lens.iter().map(|l| l << 20).collect::<Vec<_>>());
    let split = |lens: &[u64], min_gain: u64| {
        let planes = mib(lens);
        let (by_plane, last) = split_off_last(&planes, min_gain << 20);
        (by_plane.len(), last.is_some())
    };
    assert_eq!(split(&[7, 7, 7, 7, 7, 7, 7], 1), (6, true));
    assert_eq!(split(&[12, 7, 7, 7, 7, 7, 7, 7], 1), (7, true));
    assert_eq!(split(&[7, 7, 7, 7], 1), (4, false));
    assert_eq!(split(&[40, 40, 40], 1), (2, true));
    assert_eq!(split(&[40, 40], 1), (2, false));
    assert_eq!(split(&[10, 10, 10, 30], 1), (4, false));
    // Splitting off saves less than it costs.
    assert_eq!(split(&[7, 7, 7], 8), (3, false));
}

/// Records where each event of the lines named `line` starts.
struct EventsOn<'a> {
    line: &'a str,
    on: bool,
    offsets: Vec<u64>,
}

impl crate::capture::EventVisitor for EventsOn<'_> {
    fn line(&mut self, line: &crate::capture::LineInfo) -> bool {
        self.on = line.name == self.line;
        true
    }
    fn event(&mut self, _line: &crate::capture::LineInfo, event: &crate::capture::Event<'_>) {
        if self.on {
            self.offsets.push(event.file_offset);
        }
    }
}

/// A TPU run whose ops lines are counted on the second thread, with a line that cannot
/// be read (an event's key made invalid): one walk stops that plane there, and so does
/// the shared read (it reads the run again in one walk). Either way, and undamaged,
/// two threads give the one-thread report.
#[test]
fn a_tpu_run_read_by_line_stops_where_one_walk_stops() {
    let shared = Scan::TwoThreads {
        host_from_bytes: u64::MAX,
        device_from_bytes: 0,
        cut_from_bytes: 0,
    };
    let mut tried = 0;
    for path in real_captures::all() {
        let src = FileSource::open(&path).expect("open");
        let tpus: Vec<PlaneRef> = CaptureIndex::scan(&src)
            .expect("index")
            .planes
            .into_iter()
            .filter(|p| p.name.contains("TPU"))
            .collect();
        let Some(second_tpu) = tpus.get(1) else {
            continue;
        };
        assert_eq!(report_with(&src, shared), one_scanner_report(&src));
        let plane = crate::capture::Plane::open(&src, second_tpu).expect("open");
        let mut ops = EventsOn {
            line: "XLA Ops",
            on: false,
            offsets: Vec::new(),
        };
        plane.visit_events(&src, &mut ops).expect("walk");
        let Some(&at) = ops.offsets.get(ops.offsets.len() / 2) else {
            continue;
        };
        let mut bytes = std::fs::read(&path).expect("read");
        // Field 4 (an event) with wire type 7, which no decoder reads.
        bytes[at as usize] = (4 << 3) | 7;
        let damaged = std::env::temp_dir().join(format!(
            "oomlens-damaged-tpu-{}-{}.xplane.pb",
            std::process::id(),
            tried
        ));
        std::fs::write(&damaged, &bytes).expect("write");
        let undamaged = one_scanner_report(&src);
        let src = FileSource::open(&damaged).expect("open");
        let one = one_scanner_report(&src);
        assert_ne!(one, undamaged, "the damage stops the plane's walk");
        let two = report_with(&src, shared);
        let _ = std::fs::remove_file(&damaged);
        assert_eq!(two, one, "{}", path.display());
        tried += 1;
    }
    assert!(tried >= 1, "no capture had two TPU planes with ops");
}
