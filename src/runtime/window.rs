//! Pass two: the host events between the last two launches, grouped by name, and the
//! marks pass one leaves on each host line ([`LineMarks`]) so that pass two skips the
//! lines and the stretches of lines that cannot hold them.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::names::{classify, EventKind};
use super::HOST_PLANE;
use crate::capture::{Event, EventVisitor, LineInfo, Plane};
use crate::error::Error;
use crate::report::model::HostEventGroup;
use crate::source::ByteSource;

/// How often (in visited events of a line) the scan leaves a checkpoint.
pub(super) const CHECKPOINT_EVERY: u32 = 4096;

/// Distinct host-event names kept between two launches.
const HOST_EVENT_NAMES: usize = 2000;

/// What pass one learned about a host plane's lines, for a later walk over a time
/// window: which lines it can skip and where in a line it can start. Compact, since a
/// plane may have up to a million lines: 16 bytes a line, plus one checkpoint per
/// [`CHECKPOINT_EVERY`] visited events.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct LineMarks {
    /// Per line: starts of its first and last events (all of them, visited or not);
    /// [`LineMarks::UNKNOWN`] for a line not walked to its end.
    spans: Vec<(i64, i64)>,
    /// (line, event start, event file offset) after every [`CHECKPOINT_EVERY`] visited
    /// events of a line (its start is the first resume point), in line order.
    checkpoints: Vec<(u32, i64, u64)>,
}

impl LineMarks {
    /// A span that overlaps every window.
    const UNKNOWN: (i64, i64) = (i64::MIN, i64::MAX);

    pub(super) fn set_span(&mut self, line: usize, span: (i64, i64)) {
        if line >= crate::capture::plane::MAX_LINES_INDEXED {
            return;
        }
        if self.spans.len() <= line {
            self.spans.resize(line + 1, Self::UNKNOWN);
        }
        self.spans[line] = span;
    }

    pub(super) fn add_checkpoint(&mut self, line: usize, start_ps: i64, file_offset: u64) {
        if let Ok(line) = u32::try_from(line) {
            self.checkpoints.push((line, start_ps, file_offset));
        }
    }

    /// The bytes the marks hold on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        crate::free::heap_bytes(&self.spans)
            .saturating_add(crate::free::heap_bytes(&self.checkpoints))
    }

    /// Whether `line` may have events starting in `[from, to)`.
    pub(super) fn may_overlap(&self, line: usize, from: i64, to: i64) -> bool {
        let (first, last) = self.spans.get(line).copied().unwrap_or(Self::UNKNOWN);
        last >= from && first < to
    }

    /// The file offset of the last checkpoint of `line` at or before `from`, if any.
    pub(super) fn resume_point(&self, line: usize, from: i64) -> Option<u64> {
        let line = u32::try_from(line).ok()?;
        let lo = self.checkpoints.partition_point(|c| c.0 < line);
        let hi = self.checkpoints.partition_point(|c| c.0 <= line);
        let points = self.checkpoints.get(lo..hi)?;
        let i = points.partition_point(|c| c.1 <= from);
        points.get(i.checked_sub(1)?).map(|c| c.2)
    }

    /// The marks of lines numbered from 0 by a walk that started `lines` lines into
    /// the plane, numbered as one walk from the start numbers them (and capped as it
    /// caps them): what [`LineMarks::absorb_numbered_from`] adds.
    #[cfg(test)]
    pub(super) fn numbered_from(self, lines: usize) -> LineMarks {
        let max = crate::capture::plane::MAX_LINES_INDEXED;
        let mut spans = vec![Self::UNKNOWN; lines.min(max)];
        spans.extend(self.spans);
        spans.truncate(max);
        let checkpoints = self
            .checkpoints
            .into_iter()
            .filter_map(|(line, start, offset)| {
                let line = u32::try_from(lines).ok()?.checked_add(line)?;
                Some((line, start, offset))
            })
            .collect();
        LineMarks { spans, checkpoints }
    }

    /// [`LineMarks::absorb`] of `other` numbered from `lines` ([`LineMarks::numbered_from`]),
    /// without writing out the unknown lines before its first: they change nothing.
    pub(super) fn absorb_numbered_from(&mut self, other: LineMarks, lines: usize) {
        let end = lines
            .saturating_add(other.spans.len())
            .min(crate::capture::plane::MAX_LINES_INDEXED);
        if self.spans.len() < end {
            self.spans.resize(end, Self::UNKNOWN);
        }
        let theirs = self
            .spans
            .iter_mut()
            .skip(lines)
            .take(end.saturating_sub(lines));
        for (mine, theirs) in theirs.zip(other.spans) {
            if *mine == Self::UNKNOWN {
                *mine = theirs;
            }
        }
        let first = u32::try_from(lines).ok();
        self.checkpoints.extend(
            other
                .checkpoints
                .into_iter()
                .filter_map(|(line, start, offset)| {
                    Some((first?.checked_add(line)?, start, offset))
                }),
        );
        self.checkpoints.sort_by_key(|c| c.0);
    }

    /// Adds what another scanner learned about other lines of the same plane, numbered
    /// as this one numbers them (what [`LineMarks::absorb_numbered_from`] does, for
    /// its tests).
    #[cfg(test)]
    fn absorb(&mut self, other: LineMarks) {
        if self.spans.len() < other.spans.len() {
            self.spans.resize(other.spans.len(), Self::UNKNOWN);
        }
        for (mine, theirs) in self.spans.iter_mut().zip(other.spans) {
            if *mine == Self::UNKNOWN {
                *mine = theirs;
            }
        }
        self.checkpoints.extend(other.checkpoints);
        self.checkpoints.sort_by_key(|c| c.0);
    }
}

/// Groups of host events listed between two launches (the most time first).
const HOST_EVENT_GROUPS_LISTED: usize = 50;

/// Pass two: host events that start within `[from, to)`, grouped by name (allocator
/// events left out: they are shown elsewhere), the most time first.
pub(super) fn host_events_between(
    src: &dyn ByteSource,
    planes: &[Plane],
    line_marks: &[LineMarks],
    from: i64,
    to: i64,
) -> Result<Vec<HostEventGroup>, Error> {
    let mut out: Vec<HostEventGroup> = Vec::new();
    for (k, plane) in planes.iter().filter(|p| p.name == HOST_PLANE).enumerate() {
        let mut window = Window {
            marks: line_marks.get(k),
            from,
            to,
            past_window: false,
            groups: HashMap::new(),
        };
        window.walk(src, plane)?;
        out.extend(window.named_groups(plane));
    }
    // Names break ties, so that the order does not depend on hashing.
    out.sort_by(|a, b| {
        b.total_ns
            .total_cmp(&a.total_ns)
            .then_with(|| b.count.cmp(&a.count))
            .then_with(|| a.name.cmp(&b.name))
    });
    out.truncate(HOST_EVENT_GROUPS_LISTED);
    Ok(out)
}

/// A walk of one host plane for the events starting in `[from, to)`.
struct Window<'p> {
    marks: Option<&'p LineMarks>,
    from: i64,
    to: i64,
    /// Whether the current line has passed the window.
    past_window: bool,
    /// Event metadata id → (events, summed duration).
    groups: HashMap<i64, (u64, i64)>,
}

impl Window<'_> {
    /// Whether a line can have events in the window: not when all its events start
    /// outside it (unknown without marks).
    fn may_overlap(&self, line: usize) -> bool {
        self.marks
            .is_none_or(|m| m.may_overlap(line, self.from, self.to))
    }

    /// Walks the plane's lines that may overlap the window: only those, where the
    /// lines are indexed.
    fn walk(&mut self, src: &dyn ByteSource, plane: &Plane) -> Result<(), Error> {
        if plane.lines_indexed() {
            let (marks, from, to) = (self.marks, self.from, self.to);
            let wanted = |i: usize| marks.is_none_or(|m| m.may_overlap(i, from, to));
            plane.visit_lines_where(src, wanted, self)
        } else {
            plane.visit_events(src, self)
        }
    }

    /// The groups found, by event name, allocator bookkeeping left out.
    fn named_groups(self, plane: &Plane) -> impl Iterator<Item = HostEventGroup> + '_ {
        self.groups
            .into_iter()
            .filter_map(move |(id, (count, total))| {
                let name = plane
                    .event_metadata
                    .get(&id)
                    .map(|m| m.name.clone())
                    .unwrap_or_default();
                // Allocator bookkeeping is shown elsewhere; launches bound the window.
                let allocator = matches!(
                    classify(&name),
                    EventKind::Allocation | EventKind::Deallocation
                );
                (!allocator).then(|| HostEventGroup {
                    name,
                    count,
                    total_ns: total as f64 / 1000.0,
                })
            })
    }
}

impl EventVisitor for Window<'_> {
    fn line(&mut self, line: &LineInfo) -> bool {
        self.may_overlap(line.ordinal)
    }

    // Lines are in time order: start at the last checkpoint before the window and
    // stop at the first event after it.
    fn resume_at(&mut self, line: &LineInfo) -> Option<u64> {
        self.past_window = false;
        self.marks?.resume_point(line.ordinal, self.from)
    }

    fn line_done(&mut self) -> bool {
        self.past_window
    }

    fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
        let t = event.start_ps(line);
        if t >= self.to {
            self.past_window = true;
            return;
        }
        if t < self.from {
            return;
        }
        if self.groups.len() >= HOST_EVENT_NAMES && !self.groups.contains_key(&event.metadata_id) {
            return;
        }
        let g = self.groups.entry(event.metadata_id).or_insert((0, 0));
        g.0 += 1;
        g.1 = g.1.saturating_add(event.duration_ps.max(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::plane::MAX_LINES_INDEXED;

    /// Marks of `lines` lines, some walked to their end (a span) and some not, with a
    /// checkpoint on every third.
    fn marks(lines: usize, seed: i64) -> LineMarks {
        let mut m = LineMarks::default();
        for line in 0..lines {
            if (line as i64 + seed) % 4 != 0 {
                m.set_span(line, (seed + line as i64, seed + 2 * line as i64));
            }
            if line % 3 == 0 {
                m.add_checkpoint(line, seed + line as i64, line as u64 * 10);
            }
        }
        m
    }

    /// Adding a later part's marks as numbered from its first line is adding them
    /// renumbered: before, across and past the lines already marked, and past the cap.
    #[test]
    fn marks_numbered_from_a_line_add_as_renumbered() {
        for (mine, theirs, lines) in [
            (10, 5, 10),
            (10, 5, 4),
            (10, 5, 0),
            (3, 5, 12),
            (0, 5, 7),
            (10, 0, 20),
            (10, 5, MAX_LINES_INDEXED - 2),
            (10, 5, MAX_LINES_INDEXED + 3),
        ] {
            let (earlier, later) = (marks(mine, 1), marks(theirs, 2));
            let mut expected = earlier.clone();
            expected.absorb(later.clone().numbered_from(lines));
            let mut added = earlier;
            added.absorb_numbered_from(later, lines);
            assert_eq!(added.spans, expected.spans, "{mine} {theirs} {lines}");
            assert_eq!(
                added.checkpoints, expected.checkpoints,
                "{mine} {theirs} {lines}"
            );
        }
    }
}
