//! Two threads sharing a plane read tables-first by segments (see `Plane::visit_segment`),
//! cut where the work is: the first thread walks from the plane's start; the other
//! takes the second half of what is left of it, from a line start found by its shape;
//! and each thread, done with its segment, takes the second half of what is left of
//! the other's, until too little is left to be worth a part. Lines cost what their
//! events cost, not what their bytes weigh, so halves by bytes fixed in advance left
//! one thread idle; cutting only when a thread is idle keeps the parts few. Parts are
//! added to the first one in line order ([`SegmentJoin`]) as soon as those before them
//! are in, by the thread that handed over the last of them.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::capture::{Plane, SegmentJoin, SegmentWalk};
use crate::error::Error;
use crate::source::ByteSource;

/// How many times a thread tries to cut the other's segment while that one moves on
/// past each cut it finds.
const CUT_TRIES: usize = 4;

/// What a plane's segments are scanned into, and how.
pub(super) trait SegmentScan: Sync {
    /// What one segment is scanned into.
    type Part: Send;

    /// A part for a segment after the first.
    fn part(&self) -> Self::Part;

    /// Scans the segment from `from` into `part`, reading through `src`, up to the
    /// first later line start `stop` holds for.
    fn scan(
        &self,
        src: &dyn ByteSource,
        from: u64,
        stop: &dyn Fn(u64) -> bool,
        part: &mut Self::Part,
    ) -> SegmentWalk;

    /// Readies a scanned segment's part to be added, on the thread that scanned it.
    fn finish(&self, _part: &mut Self::Part) {}

    /// Adds `later`, the part of the segment joined after what `into` holds, whose
    /// lines come after `lines_before` others.
    fn add(&self, into: &mut Self::Part, later: Self::Part, lines_before: usize);
}

/// A segment scanned by one thread, its part not yet finished and handed over; whether
/// it is the first segment (the part the others are added to).
type Scanned<P> = (SegmentWalk, P, bool);

/// Where the segments start and where each thread's walk is.
struct Cuts {
    /// Segment starts, increasing: the plane's start, then each cut.
    starts: Vec<u64>,
    /// For each thread, the start of the last line its walk started, while it walks.
    walking: [Option<u64>; 2],
}

/// The parts handed over, and the part they are added to.
struct Joined<P> {
    /// The first segment's part, once scanned, with every part joined since.
    whole: Option<P>,
    join: SegmentJoin,
    /// Parts scanned but not joined yet, with their walks.
    waiting: Vec<(P, SegmentWalk)>,
}

/// What both threads share while they scan.
struct Shared<'a, S: SegmentScan> {
    plane: &'a Plane,
    how: &'a S,
    /// Segments left shorter than this many bytes are not cut.
    cut_from_bytes: u64,
    cuts: Mutex<Cuts>,
    joined: Mutex<Joined<S::Part>>,
}

/// `plane`'s lines scanned by this thread (reading through `src`), from the plane's
/// start into `first`, and another (through `second`), cut into segments as they go:
/// every segment joined, added to `first` in order; segments a walk passed over are
/// dropped. Only for a plane that shares by segments (`Plane::lines_span`).
pub(super) fn scan_segments<S: SegmentScan>(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    plane: &Plane,
    how: &S,
    cut_from_bytes: u64,
    first: S::Part,
) -> Result<S::Part, Error> {
    let start = plane.offset();
    let shared = Shared {
        plane,
        how,
        cut_from_bytes,
        // The first thread walks from the start before the second can cut.
        cuts: Mutex::new(Cuts {
            starts: vec![start],
            walking: [Some(start), None],
        }),
        joined: Mutex::new(Joined {
            whole: None,
            join: SegmentJoin::new(plane),
            waiting: Vec::new(),
        }),
    };
    let worker = std::thread::scope(|scope| {
        let worker = scope.spawn(|| shared.take_cuts(second, 1, None));
        let mut whole = first;
        let walk = how.scan(src, start, &|at| shared.stops(0, at), &mut whole);
        shared.walk_ends(0);
        shared.take_cuts(src, 0, Some((walk, whole, true)));
        worker.join()
    });
    let joined = shared
        .joined
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    match (worker, joined.whole) {
        (Ok(()), Some(whole)) => Ok(whole),
        _ => Err(Error::Read {
            offset: start,
            message: "the second scan thread stopped".into(),
        }),
    }
}

impl<S: SegmentScan> Shared<'_, S> {
    fn cuts(&self) -> MutexGuard<'_, Cuts> {
        self.cuts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn joined(&self) -> MutexGuard<'_, Joined<S::Part>> {
        self.joined.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// For thread `me`'s walk, at a line start `at` after its first: whether another
    /// segment starts there (the walk stops); else the walk's progress is noted.
    fn stops(&self, me: usize, at: u64) -> bool {
        let mut cuts = self.cuts();
        if cuts.starts.binary_search(&at).is_ok() {
            return true;
        }
        if let Some(walking) = cuts.walking.get_mut(me) {
            *walking = Some(at);
        }
        false
    }

    fn walk_ends(&self, me: usize) {
        if let Some(walking) = self.cuts().walking.get_mut(me) {
            *walking = None;
        }
    }

    /// Thread `me` cuts the other's segment and scans the second half, again and
    /// again, until too little is left to cut; `scanned` is the segment it scanned
    /// before, if any. Each segment's part is finished and handed over once the next
    /// cut is claimed (or none can be): the sooner a thread cuts, the more is left of
    /// the other's segment to halve, and finishing a host plane's part (its history
    /// capped and put in order) takes milliseconds.
    fn take_cuts(&self, src: &dyn ByteSource, me: usize, mut scanned: Option<Scanned<S::Part>>) {
        while let Some(from) = self.cut(src, me) {
            if let Some(done) = scanned.take() {
                self.finish_and_hand_over(done);
            }
            let mut part = self.how.part();
            let walk = self
                .how
                .scan(src, from, &|at| self.stops(me, at), &mut part);
            self.walk_ends(me);
            scanned = Some((walk, part, false));
        }
        if let Some(done) = scanned {
            self.finish_and_hand_over(done);
        }
    }

    fn finish_and_hand_over(&self, (walk, mut part, whole): Scanned<S::Part>) {
        self.how.finish(&mut part);
        self.hand_over(walk, part, whole);
    }

    /// Cuts the segment the other thread walks in two at a line start near the middle
    /// of what is left of it, and takes the second half: where it starts, or `None`
    /// when the other walks nothing, has too little left, or no line start is found.
    fn cut(&self, src: &dyn ByteSource, me: usize) -> Option<u64> {
        let other = 1 - me.min(1);
        let (_, lines_end) = self.plane.lines_span()?;
        for _ in 0..CUT_TRIES {
            let (at, end) = {
                let cuts = self.cuts();
                let at = (*cuts.walking.get(other)?)?;
                let end = cuts
                    .starts
                    .iter()
                    .copied()
                    .find(|&s| s > at)
                    .unwrap_or(lines_end);
                (at, end)
            };
            let left = end.saturating_sub(at);
            if left < self.cut_from_bytes.max(2) {
                return None;
            }
            let found = self
                .plane
                .line_start_near(src, at.saturating_add(left / 2))?;
            if found >= end {
                return None;
            }
            let mut cuts = self.cuts();
            // Only ahead of the other walk: a line it started is its own.
            let ahead = cuts
                .walking
                .get(other)
                .copied()
                .flatten()
                .is_some_and(|at| at < found);
            if ahead {
                let place = cuts.starts.partition_point(|&s| s < found);
                cuts.starts.insert(place, found);
                if let Some(walking) = cuts.walking.get_mut(me) {
                    *walking = Some(found);
                }
                return Some(found);
            }
        }
        None
    }

    /// Hands over a segment's part and walk (`whole`: the first segment's, which the
    /// others are added to), and joins every part that can be joined now.
    fn hand_over(&self, walk: SegmentWalk, part: S::Part, whole: bool) {
        let dropped = {
            let mut joined = self.joined();
            let joined = &mut *joined;
            if whole {
                let _ = joined.join.join(self.plane, walk);
                joined.whole = Some(part);
            } else {
                joined.waiting.push((part, walk));
            }
            self.join_waiting(joined)
        };
        // Parts of segments passed over, freed outside the lock.
        drop(dropped);
    }

    /// Adds the waiting parts that continue what is joined, in order; returns those
    /// that never will be.
    fn join_waiting(&self, joined: &mut Joined<S::Part>) -> Vec<(S::Part, SegmentWalk)> {
        let mut dropped = Vec::new();
        let Some(whole) = joined.whole.as_mut() else {
            return dropped;
        };
        loop {
            let (passed, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut joined.waiting)
                .into_iter()
                .partition(|(_, walk)| joined.join.passed(walk.start()));
            dropped.extend(passed);
            joined.waiting = waiting;
            let next = joined.join.next_start();
            let Some(at) = joined
                .waiting
                .iter()
                .position(|(_, walk)| Some(walk.start()) == next)
            else {
                return dropped;
            };
            let (part, walk) = joined.waiting.swap_remove(at);
            if let Some(lines_before) = joined.join.join(self.plane, walk) {
                self.how.add(whole, part, lines_before);
            }
        }
    }
}
