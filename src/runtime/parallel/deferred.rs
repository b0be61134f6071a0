//! A run of TPU planes read on two threads by line: this thread walks the planes in
//! order, reading each module line (whose module runs place the device's work on
//! launches, in order) and handing over each line that can only count ops (see
//! `DeviceVisitor::deferring`); both threads count the lines handed over, this one
//! once its walk is done. Real TPU planes hold one long line of ops each, so the first
//! plane's ops, which used to be read alone before the others could be shared, now
//! overlap the rest. Each plane is opened by its tables, read from its end, so that the
//! other thread need not wait for a walk over its line headers; the walk that hands
//! its lines over confirms them.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::super::device::DeviceVisitor;
use super::super::records::RuntimeScan;
use super::super::stats::StatIds;
use crate::capture::{LineInfo, Plane, PlaneRef};
use crate::error::Error;
use crate::source::ByteSource;

/// Lines waiting at most, after a plane's walk, before the walking thread counts some
/// itself: what bounds the queue (a line waits without its name, in a few dozen
/// bytes). Below it the walker goes on to the next plane, the other thread counting
/// meanwhile; the two share what is left once the walk is over.
const MAX_HANDED_OVER: usize = 4096;

/// Lines the walking thread leaves waiting when it counts some, so that the other
/// thread has work while the walker opens the next plane and reads its module line(s)
/// up to its first line handed over (on the scaled TPU capture, 634 module lines:
/// milliseconds).
const LEFT_WAITING: usize = 1024;

/// A plane of the run, with its stat ids.
type PlaneIds = (Arc<Plane>, StatIds);

/// A line handed over: the plane it is on (by place in the run) and the line.
struct HandedOver {
    plane: usize,
    line: LineInfo,
}

/// What the threads share: the lines handed over, and the planes they are on.
#[derive(Default)]
struct Lines {
    queue: VecDeque<HandedOver>,
    /// The run's planes by place, as the walk opens them (`None`: could not be), with
    /// their stat ids.
    planes: Vec<Option<PlaneIds>>,
    /// The walk is over: no more lines will come.
    walked: bool,
    /// A line handed over could not be read, or a plane's walk did not meet its
    /// tables where they were read from: the run is read again in one walk.
    damaged: bool,
}

/// Ops counted on lines handed over, per plane of the run.
#[derive(Default)]
struct Counted {
    kernels: u64,
    device_events: Vec<u64>,
    last_kernel_ps: Option<i64>,
}

struct Shared {
    lines: Mutex<Lines>,
    more: Condvar,
}

impl Shared {
    fn lines(&self) -> MutexGuard<'_, Lines> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn hand_over(&self, plane: usize, line: &LineInfo) {
        // Without its name: a line handed over is not a module line, all the counting
        // visitor asks of the name.
        let line = LineInfo {
            id: line.id,
            name: String::new(),
            timestamp_ns: line.timestamp_ns,
            ordinal: line.ordinal,
            span: line.span.clone(),
        };
        self.lines().queue.push_back(HandedOver { plane, line });
        self.more.notify_one();
    }

    /// The next line to count, with its plane when not `reading` that one already,
    /// waiting for one while the walk goes on (`wait`); `None` when none is left, or
    /// when not waiting and only `leave` lines are.
    fn next(
        &self,
        wait: bool,
        leave: usize,
        reading: Option<usize>,
    ) -> Option<(HandedOver, Option<PlaneIds>)> {
        let mut lines = self.lines();
        loop {
            if !wait && lines.queue.len() <= leave {
                return None;
            }
            if let Some(handed) = lines.queue.pop_front() {
                if reading == Some(handed.plane) {
                    return Some((handed, None));
                }
                let plane = lines.planes.get(handed.plane).cloned().flatten()?;
                return Some((handed, Some(plane)));
            }
            if lines.walked || lines.damaged || !wait {
                return None;
            }
            lines = self
                .more
                .wait(lines)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Counts handed-over lines, reading through `src`, until none is left (or, with
    /// `wait` false, only `leave` are waiting). Lines of one plane come in file order:
    /// while they do, one visitor (and its cache of op types) and one reader (and its
    /// windows) serve them.
    fn count(&self, src: &dyn ByteSource, counted: &mut Counted, wait: bool, leave: usize) {
        let mut next = self.next(wait, leave, None);
        while let Some((first, Some((plane, ids)))) = next {
            let at = first.plane;
            let mut reader = plane.line_reader(src);
            let mut part = RuntimeScan::default();
            let mut visitor = DeviceVisitor::counting(&plane, ids, &mut part);
            let mut line = first;
            next = loop {
                if plane
                    .visit_line_alone(&mut reader, &line.line, &mut visitor)
                    .is_err()
                {
                    // One walk would have stopped at it: the run is read again that way.
                    self.lines().damaged = true;
                    self.more.notify_all();
                    return;
                }
                match self.next(wait, leave, Some(at)) {
                    Some((more, None)) => line = more,
                    other => break other,
                }
            };
            counted.add(at, &part);
        }
    }
}

impl Counted {
    /// Adds these counts to the run's part, each plane's to that plane's count.
    fn add_to(self, part: &mut RuntimeScan) {
        part.kernels = part.kernels.saturating_add(self.kernels);
        part.last_kernel_ps = part.last_kernel_ps.max(self.last_kernel_ps);
        for (plane, events) in self.device_events.into_iter().enumerate() {
            part.device_events = part.device_events.saturating_add(events);
            if let Some(count) = part.device_kernel_counts.get_mut(plane) {
                *count = count.saturating_add(events);
            }
        }
    }

    /// Adds what a visitor counted on plane `plane`'s lines.
    fn add(&mut self, plane: usize, part: &RuntimeScan) {
        self.kernels = self.kernels.saturating_add(part.kernels);
        self.last_kernel_ps = self.last_kernel_ps.max(part.last_kernel_ps);
        if self.device_events.len() <= plane {
            self.device_events.resize(plane.saturating_add(1), 0);
        }
        if let Some(events) = self.device_events.get_mut(plane) {
            *events = events.saturating_add(part.device_events);
        }
    }
}

/// Reads the run of TPU planes `planes` (the first of them collecting its module runs
/// as launches when `collect_first`) into a copy of `result`'s launches
/// ([`RuntimeScan::kernel_part`]), with their per-plane counts, on two threads as the
/// module docs say: the part to add to `result` ([`RuntimeScan::absorb_kernels`]), or
/// `None` when a line handed over could not be read (one walk would have stopped
/// there) or a plane's tables were not where they were read from: the run is to be
/// read again in one walk.
pub(in crate::runtime) fn read_tpu_run(
    src: &dyn ByteSource,
    second: &(dyn ByteSource + Send + Sync),
    planes: &[PlaneRef],
    result: &RuntimeScan,
    order: &[u32],
    collect_first: bool,
) -> Result<Option<RuntimeScan>, Error> {
    let shared = Shared {
        lines: Mutex::new(Lines::default()),
        more: Condvar::new(),
    };
    let mut part = result.kernel_part();
    let mut mine = Counted::default();
    let (walk, theirs) = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let mut counted = Counted::default();
            shared.count(second, &mut counted, true, 0);
            counted
        });
        let walk = {
            let _end = EndOfWalk(&shared);
            walk_planes(
                src,
                &shared,
                planes,
                &mut part,
                order,
                collect_first,
                &mut mine,
            )
        };
        shared.count(src, &mut mine, true, 0);
        (walk, worker.join())
    });
    walk?;
    let Ok(theirs) = theirs else {
        return Err(Error::Read {
            offset: planes.first().map_or(0, |p| p.offset),
            message: "the second scan thread stopped".into(),
        });
    };
    if shared.lines().damaged {
        return Ok(None);
    }
    mine.add_to(&mut part);
    theirs.add_to(&mut part);
    Ok(Some(part))
}

/// Marks the walk over when dropped (a walk that stopped early included), so that the
/// other thread does not wait for lines that will not come.
struct EndOfWalk<'a>(&'a Shared);

impl Drop for EndOfWalk<'_> {
    fn drop(&mut self) {
        self.0.lines().walked = true;
        self.0.more.notify_all();
    }
}

/// This thread's walk of the run: each plane opened and walked in order into `part`,
/// its lines that only count ops handed over; counts some of them itself, into
/// `counted`, whenever many wait.
fn walk_planes(
    src: &dyn ByteSource,
    shared: &Shared,
    planes: &[PlaneRef],
    part: &mut RuntimeScan,
    order: &[u32],
    collect_first: bool,
    counted: &mut Counted,
) -> Result<(), Error> {
    for (i, at) in planes.iter().enumerate() {
        if shared.lines().damaged {
            // The run is read again in one walk.
            break;
        }
        // Its tables read from its end: opening it by walking its lines would read
        // each line's header (thousands on a real TPU plane) while the other thread
        // waits; the walk below meets them all anyway, and confirms the tables.
        let Ok(plane) = Plane::open_tables_first(src, at) else {
            shared.lines().planes.push(None);
            part.count_device_plane(0, 0);
            continue;
        };
        let plane = Arc::new(plane);
        let ids = StatIds::resolve(&plane);
        shared.lines().planes.push(Some((Arc::clone(&plane), ids)));
        let events_before = part.device_events;
        let hand_over = |line: &LineInfo| shared.hand_over(i, line);
        let collect = collect_first && i == 0;
        let mut visitor = DeviceVisitor::new(&plane, part, order, collect).deferring(&hand_over);
        plane.visit_events(src, &mut visitor)?;
        let Some(line_count) = plane.walked_line_count() else {
            // The walk did not meet the tables where they were taken to be: what was
            // read with them is read again, in one walk of the run.
            shared.lines().damaged = true;
            shared.more.notify_all();
            break;
        };
        // Its stats are the plane's only now that the walk confirmed its tables.
        part.note_device_memory(&plane);
        let seen = part.device_events - events_before;
        part.count_device_plane(line_count, seen);
        if shared.lines().queue.len() > MAX_HANDED_OVER {
            shared.count(src, counted, false, LEFT_WAITING);
        }
    }
    Ok(())
}
