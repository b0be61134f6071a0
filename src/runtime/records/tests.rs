use super::*;

/// Times in a scrambled but reproducible order (a permutation of `0..n`).
pub(crate) fn scrambled(n: usize) -> impl Iterator<Item = i64> {
    (0..n as u64).map(move |i| ((i * 7919) % n as u64) as i64)
}

pub(crate) fn record(time_ps: i64, origin: Origin) -> AllocationRecord {
    AllocationRecord {
        time_ps,
        in_use: time_ps as u64,
        reserved: 0,
        addr: time_ps as u64,
        size: 1,
        requested: 1,
        allocator: 0,
        is_allocation: true,
        origin,
        event_at: 0,
    }
}

pub(crate) fn execution(start_ps: i64) -> ExecutionRecord {
    ExecutionRecord {
        run_id: Some(start_ps),
        ..ExecutionRecord::spanning(start_ps, start_ps + 1)
    }
}

/// Whatever order events arrive in, and however the scan is split, the history kept
/// is the latest events in time, in arrival order, and every event is counted.
#[test]
fn the_latest_allocator_events_are_kept_and_the_rest_counted() {
    let n = 3 * MAX_ALLOCATION_RECORDS + 123;
    let mut whole = RuntimeScan::default();
    for t in scrambled(n) {
        whole.keep_record(record(t, Origin::Unknown));
    }
    whole.finish_host();
    let through = (n - MAX_ALLOCATION_RECORDS - 1) as i64;
    assert_eq!(whole.records.len(), MAX_ALLOCATION_RECORDS);
    assert_eq!(whole.records_dropped as usize, n - MAX_ALLOCATION_RECORDS);
    assert_eq!(whole.records_dropped_through_ps, Some(through));
    assert!(whole.records.iter().all(|r| r.time_ps > through));
    assert!(whole
        .records
        .windows(2)
        .all(|w| w[0].time_ps < w[1].time_ps));

    // The same events in two parts, merged: the same history.
    let (mut first, mut second) = (RuntimeScan::default(), RuntimeScan::default());
    for (i, t) in scrambled(n).enumerate() {
        let part = if i < n / 3 { &mut first } else { &mut second };
        part.keep_record(record(t, Origin::Unknown));
    }
    first.absorb(second);
    first.finish_host();
    assert_eq!(first.records_dropped, whole.records_dropped);
    assert_eq!(first.records_dropped_through_ps, Some(through));
    let times = |s: &RuntimeScan| s.records.iter().map(|r| r.time_ps).collect::<Vec<_>>();
    assert_eq!(times(&first), times(&whole));
}

/// Events of a history, `addr` numbering them in the order they came.
fn numbered(times: &[i64]) -> Vec<AllocationRecord> {
    let mut records: Vec<AllocationRecord> =
        times.iter().map(|&t| record(t, Origin::Unknown)).collect();
    for (i, r) in records.iter_mut().enumerate() {
        r.addr = i as u64;
    }
    records
}

/// What any scan of `records` must keep: those later than the time of the cap's
/// worth plus one latest, in time order and, among equal times, in the order met;
/// with the count dropped and that time.
fn latest_of(records: &[AllocationRecord]) -> (Vec<(i64, u64)>, u64, Option<i64>) {
    let mut times: Vec<i64> = records.iter().map(|r| r.time_ps).collect();
    times.sort_unstable();
    let through = times
        .len()
        .checked_sub(MAX_ALLOCATION_RECORDS + 1)
        .map(|i| times[i]);
    let mut kept: Vec<(i64, u64)> = records
        .iter()
        .filter(|r| through.is_none_or(|t| r.time_ps > t))
        .map(|r| (r.time_ps, r.addr))
        .collect();
    kept.sort_by_key(|&(t, _)| t);
    let dropped = (records.len() - kept.len()) as u64;
    (kept, dropped, through)
}

fn history(s: &RuntimeScan) -> (Vec<(i64, u64)>, u64, Option<i64>) {
    let kept = s.records.iter().map(|r| (r.time_ps, r.addr)).collect();
    (kept, s.records_dropped, s.records_dropped_through_ps)
}

/// A history met in time order is capped by place rather than by selecting the
/// cut's time: the same records, count and cut as for any order, with runs of
/// equal times across each cut, and when the order breaks before a cut or after
/// the last one (capping then selects again).
#[test]
fn a_history_met_in_time_order_is_capped_as_any_other() {
    let n = 3 * MAX_ALLOCATION_RECORDS + 77;
    // One event a time, and five.
    let in_order = |per_time: i64| (0..n as i64).map(|i| i / per_time).collect::<Vec<_>>();
    let swapped_at = |i: usize| {
        let mut times = in_order(5);
        times.swap(i, i + 5);
        times
    };
    for times in [
        in_order(1),
        in_order(5),
        swapped_at(n / 2),
        swapped_at(n - 7),
    ] {
        let records = numbered(&times);
        let mut scan = RuntimeScan::default();
        records.iter().for_each(|&r| scan.keep_record(r));
        scan.finish_part();
        assert_eq!(history(&scan), latest_of(&records));
        assert!(scan.records_dropped > 0);
    }
}

/// Parts of a plane that share their cuts drop what is older than another's as it
/// comes, and merged they keep what one scan keeps.
#[test]
fn parts_sharing_their_cuts_keep_what_one_scan_keeps() {
    let n = 5 * MAX_ALLOCATION_RECORDS + 11;
    let records = numbered(&(0..n as i64).map(|i| i / 3).collect::<Vec<_>>());
    let (earlier, later) = records.split_at(n / 2);
    for later_first in [true, false] {
        let cut = SharedCut::new();
        let mut parts = [RuntimeScan::default(), RuntimeScan::default()];
        for part in &mut parts {
            part.share_records_cut(&cut);
        }
        let [first, second] = &mut parts;
        if later_first {
            later.iter().for_each(|&r| second.keep_record(r));
            earlier.iter().for_each(|&r| first.keep_record(r));
            // Every earlier event is older than the later part's first cut.
            assert!(first.records.is_empty());
        } else {
            // Met in turn, as two threads might.
            for (&a, &b) in earlier.iter().zip(later) {
                first.keep_record(a);
                second.keep_record(b);
            }
            second.keep_record(records[n - 1]);
        }
        let [mut first, mut second] = parts;
        first.finish_part();
        second.finish_part();
        first.absorb(second);
        first.finish_host();
        assert_eq!(history(&first), latest_of(&records), "{later_first}");
    }
}
