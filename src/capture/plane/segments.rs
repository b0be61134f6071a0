//! A plane read tables-first shared by scanners without any of them walking another's
//! lines first: a scanner takes the lines from a line start found by its shape
//! ([`Plane::line_start_near`]) near a point of the plane's bytes; each walk of such a
//! segment stops where its `stop` says a later segment starts, which proves that start
//! a line start. Segment walks are joined in order from the plane's start
//! ([`SegmentJoin`]): a walk that passes over a later start without meeting it (the
//! bytes only looked like a line) goes on, and the segments it passed over are dropped,
//! so the joined walks are always what one walk of the plane finds. Walking line
//! headers to find a middle, as [`Plane::visit_events_from_middle`] does, maps every
//! page before it: on a plane of small lines that costs as much as scanning a fifth of
//! the plane.

use super::lines::Share;
use super::{Plane, Walked, MAX_LINES_INDEXED};
use crate::capture::{EventVisitor, READ_CHUNK};
use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::{
    XLINE_DISPLAY_ID, XLINE_DISPLAY_NAME, XLINE_DURATION_PS, XLINE_EVENTS, XLINE_ID, XLINE_NAME,
    XLINE_TIMESTAMP_NS, XPLANE_LINES_TAG,
};
use crate::wire::{decode_varint, StreamReader};

/// How far past a point a line start is looked for.
const SEARCH_BYTES: usize = 1 << 20;

/// How many lines in a row, from a candidate on, must have a line's shape (or reach the
/// end of the lines) for the candidate to start a segment. Bytes inside events rarely
/// chain like that; when they do, the walk before it does not meet it and reads on.
const CHAIN: usize = 8;

/// What one segment's walk met: its part of the plane's layout, where it stopped, and
/// the damage it met, which counts only once the segment is joined.
pub struct SegmentWalk {
    start: u64,
    walked: Option<Walked>,
    stopped_at: Option<u64>,
    lines: usize,
    damage: Option<Error>,
}

impl SegmentWalk {
    /// Where the walk started.
    pub fn start(&self) -> u64 {
        self.start
    }
}

/// Joins segment walks in order, from the plane's start: each walk joined continues the
/// lines where the last one stopped; the others are to be dropped.
pub struct SegmentJoin {
    /// Where the next segment to join starts; `None` once the lines are joined to their
    /// end, or to damage.
    next: Option<u64>,
    /// Lines joined so far.
    lines: usize,
    /// The layout joined so far.
    walked: Walked,
    /// False once a joined walk met damage: it has no layout.
    layout_known: bool,
}

impl SegmentJoin {
    /// A join of `plane`'s segment walks, waiting for the one from its start.
    pub fn new(plane: &Plane) -> Self {
        SegmentJoin {
            next: Some(plane.offset),
            lines: 0,
            walked: Walked::default(),
            layout_known: true,
        }
    }

    /// Where the next segment to join starts, `None` when nothing more is joined.
    pub fn next_start(&self) -> Option<u64> {
        self.next
    }

    /// Whether the segment starting at `start` can no longer be joined: the lines
    /// before the next start are joined already, or all are.
    pub fn passed(&self, start: u64) -> bool {
        self.next.is_none_or(|next| start < next)
    }

    /// Joins `walk` if it starts where the lines joined so far stopped: returns how
    /// many lines come before it (where its ordinals start), and records its damage,
    /// which ends the join. When the lines are joined to their end, the plane takes
    /// the layout the walks met together (see [`Plane::confirm_tables`]). `None`: the
    /// walk is not the next one, and what it found is to be dropped.
    pub fn join(&mut self, plane: &Plane, walk: SegmentWalk) -> Option<usize> {
        if self.next != Some(walk.start) {
            return None;
        }
        let before = self.lines;
        self.lines = self.lines.saturating_add(walk.lines);
        match walk.walked {
            Some(later) => {
                let walked = &mut self.walked;
                walked.line_count = walked.line_count.saturating_add(later.line_count);
                let room = MAX_LINES_INDEXED.saturating_sub(walked.lines.len());
                walked.lines.extend(later.lines.into_iter().take(room));
                walked.tables_at = later.tables_at;
            }
            None => self.layout_known = false,
        }
        if let Some(e) = &walk.damage {
            // As in one walk: the damage ends the plane here.
            plane.damage.record(e);
            self.next = None;
            return Some(before);
        }
        self.next = walk.stopped_at;
        if self.next.is_none() && self.layout_known {
            let _ = plane.walked.set(std::mem::take(&mut self.walked));
        }
        Some(before)
    }
}

impl Plane {
    /// Whether scanners can share this plane by segments: read tables-first (so its
    /// lines end where its tables start) and whole.
    pub fn shares_by_segments(&self) -> bool {
        self.tables_guess.is_some() && self.cut.is_none()
    }

    /// Where the lines of a plane shared by segments lie: from the first line's start
    /// to where the tables start.
    pub fn lines_span(&self) -> Option<(u64, u64)> {
        let guess = self.tables_guess.filter(|_| self.shares_by_segments())?;
        Some((guess.lines_from, guess.tables_from))
    }

    /// A line start found by its shape at or after `point` (within a megabyte), past
    /// the first line, on a plane shared by segments; `None` when none is found.
    pub fn line_start_near(&self, src: &dyn ByteSource, point: u64) -> Option<u64> {
        let (lines_from, lines_end) = self.lines_span()?;
        line_start_near(src, point.max(lines_from), lines_end).filter(|&at| at > lines_from)
    }

    /// Visits the lines from the line start `from` (or the plane's start), numbered
    /// from 0, up to the first later line whose start `stop` says another segment
    /// starts at, or to the end of the lines. `stop` is asked at each line start after
    /// the first.
    pub fn visit_segment<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        from: u64,
        stop: &dyn Fn(u64) -> bool,
        visitor: &mut V,
    ) -> SegmentWalk {
        match self.walk_lines(src, Share::Segment { from, stop }, visitor) {
            Ok(end) => SegmentWalk {
                start: from,
                walked: end.walked,
                stopped_at: end.stopped_at,
                lines: end.lines,
                damage: None,
            },
            Err(e) => SegmentWalk {
                start: from,
                walked: None,
                stopped_at: None,
                lines: 0,
                damage: Some(e),
            },
        }
    }
}

/// The first offset at or after `from` (within [`SEARCH_BYTES`]) where [`CHAIN`] lines
/// in a row have a line's shape, or fewer reaching `lines_end` exactly.
fn line_start_near(src: &dyn ByteSource, from: u64, lines_end: u64) -> Option<u64> {
    let mut search = StreamReader::over(src, READ_CHUNK, from, lines_end);
    let mut check = StreamReader::over(src, 4096, from, lines_end);
    let window = search.window_at(from, SEARCH_BYTES).ok()?;
    window
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == XPLANE_LINES_TAG)
        .map(|(i, _)| from.saturating_add(i as u64))
        .find(|&at| lines_chain_from(&mut check, at, lines_end))
}

/// Whether [`CHAIN`] lines in a row start at `at`, or fewer end exactly at `lines_end`.
fn lines_chain_from(reader: &mut StreamReader<'_>, mut at: u64, lines_end: u64) -> bool {
    for _ in 0..CHAIN {
        if at == lines_end {
            return true;
        }
        let Some(next) = line_after(reader, at, lines_end) else {
            return false;
        };
        at = next;
    }
    true
}

/// Where the line at `at` ends, if one with a line's shape starts there: the key of a
/// plane's line, a length within the lines, and a payload that is empty or starts with
/// the key of a line's field.
fn line_after(reader: &mut StreamReader<'_>, at: u64, lines_end: u64) -> Option<u64> {
    let head = reader.window_at(at, 16).ok()?;
    let (&key, rest) = head.split_first()?;
    if key != XPLANE_LINES_TAG {
        return None;
    }
    let (len, used) = decode_varint(rest).ok()?;
    let body = rest.get(used..)?;
    let header = (used as u64).checked_add(1)?;
    let end = at.checked_add(header)?.checked_add(len)?;
    if end > lines_end {
        return None;
    }
    if len > 0 {
        let field_key = *body.first()?;
        let field = u32::from(field_key >> 3);
        let known = [
            XLINE_ID,
            XLINE_NAME,
            XLINE_TIMESTAMP_NS,
            XLINE_EVENTS,
            XLINE_DURATION_PS,
            XLINE_DISPLAY_ID,
            XLINE_DISPLAY_NAME,
        ];
        if field_key >= 0x80 || !known.contains(&field) {
            return None;
        }
    }
    Some(end)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;
    use crate::capture::CaptureIndex;
    use crate::source::FileSource;

    /// Where each line's key lies, from the payload offsets a walk indexes.
    fn line_keys(plane: &Plane) -> Vec<u64> {
        plane
            .lines
            .iter()
            .map(|&(payload, len)| {
                let mut varint = Vec::new();
                crate::wire::encode_varint(len, &mut varint);
                payload - 1 - varint.len() as u64
            })
            .collect()
    }

    /// On every real capture's planes read tables-first, a line start found by its
    /// shape from any point of the lines is a true one (a walk of the lines lists it),
    /// the first at or after that point, and one is found wherever a line follows.
    #[test]
    fn line_starts_found_by_shape_are_the_next_true_ones() {
        let mut planes_tried = 0;
        for path in crate::real_captures::all() {
            let src = FileSource::open(&path).expect("open");
            for at in CaptureIndex::scan(&src).expect("index").planes {
                let Ok(guessed) = Plane::open_tables_first(&src, &at) else {
                    continue;
                };
                let Some(guess) = guessed.tables_guess else {
                    continue;
                };
                let walked = Plane::open(&src, &at).expect("walk");
                if !walked.lines_indexed() || walked.lines.is_empty() {
                    continue;
                }
                planes_tried += 1;
                let keys = line_keys(&walked);
                let span = guess.tables_from - guess.lines_from;
                for k in 0..=16 {
                    let from = guess.lines_from + span * k / 16;
                    let found = line_start_near(&src, from, guess.tables_from);
                    let next = keys.iter().copied().find(|&key| key >= from);
                    match (found, next) {
                        (Some(found), Some(next)) => {
                            assert_eq!(found, next, "{} {}: from {from}", path.display(), at.name)
                        }
                        (Some(found), None) => panic!(
                            "{} {}: {found} found past the last line",
                            path.display(),
                            at.name
                        ),
                        // Only where the next line is farther than the search goes.
                        (None, Some(next)) => assert!(
                            next - from > SEARCH_BYTES as u64,
                            "{} {}: nothing found from {from}, a line at {next}",
                            path.display(),
                            at.name
                        ),
                        (None, None) => {}
                    }
                }
            }
        }
        assert!(
            planes_tried >= 3,
            "only {planes_tried} planes read tables-first"
        );
    }

    /// Counts events, and the lines announced (those with events).
    #[derive(Default)]
    struct Count {
        lines: usize,
        events: usize,
    }

    impl crate::capture::EventVisitor for Count {
        fn line(&mut self, _line: &crate::capture::LineInfo) -> bool {
            self.lines += 1;
            true
        }
        fn event(&mut self, _line: &crate::capture::LineInfo, _event: &crate::capture::Event<'_>) {
            self.events += 1;
        }
    }

    /// Walks `starts[i]`'s segment, stopping at any of `starts`.
    fn walk(
        plane: &Plane,
        src: &FileSource,
        starts: &[u64],
        i: usize,
        count: &mut Count,
    ) -> SegmentWalk {
        let stop = |at: u64| starts.contains(&at);
        plane.visit_segment(src, starts[i], &stop, count)
    }

    /// Segments cut at true line starts split the lines between their walks, and their
    /// layouts joined confirm the tables; a cut one byte off a line start is passed over
    /// by the walk before it, which reads on to the next cut it meets, and the segment
    /// from it is not joined. Either way the joined walks meet every line once.
    #[test]
    fn segments_split_the_lines_where_true_and_are_dropped_where_not() {
        let mut planes_tried = 0;
        for path in crate::real_captures::all() {
            let src = FileSource::open(&path).expect("open");
            for at in CaptureIndex::scan(&src).expect("index").planes {
                let walked = Plane::open(&src, &at).expect("walk");
                if !walked.lines_indexed() || walked.lines.len() < 3 {
                    continue;
                }
                let Ok(guessed) = Plane::open_tables_first(&src, &at) else {
                    continue;
                };
                if !guessed.shares_by_segments() {
                    continue;
                }
                planes_tried += 1;
                let mut whole = Count::default();
                walked.visit_events(&src, &mut whole).expect("walk");
                let keys = line_keys(&walked);
                let (third, two_thirds) = (keys.len() / 3, keys.len() * 2 / 3);
                let (a, b) = (keys[third.max(1)], keys[two_thirds.max(2)]);

                for (off, joined_count) in [(0, 3), (1, 2)] {
                    let mut plane = Plane::open_tables_first(&src, &at).expect("open");
                    let starts = [plane.offset, a + off, b];
                    let mut join = SegmentJoin::new(&plane);
                    let mut counts = [Count::default(), Count::default(), Count::default()];
                    let mut lines_before = Vec::new();
                    // Handed over out of order: the last segment first.
                    let last = walk(&plane, &src, &starts, 2, &mut Count::default());
                    assert_eq!(join.join(&plane, last), None, "not next yet");
                    let mut walks = Vec::new();
                    for (i, count) in counts.iter_mut().enumerate() {
                        walks.push(walk(&plane, &src, &starts, i, count));
                    }
                    let mut joined = [false; 3];
                    for (i, w) in walks.into_iter().enumerate() {
                        if let Some(before) = join.join(&plane, w) {
                            joined[i] = true;
                            lines_before.push(before);
                        }
                    }
                    assert_eq!(join.next_start(), None, "{}", path.display());
                    assert_eq!(joined.iter().filter(|&&j| j).count(), joined_count);
                    assert!(joined[0] && joined[2] && joined[1] == (off == 0));
                    let sum = |f: fn(&Count) -> usize| {
                        (0..3)
                            .filter(|&i| joined[i])
                            .map(|i| f(&counts[i]))
                            .sum::<usize>()
                    };
                    // (Lines without events are not announced to visitors.)
                    assert_eq!(sum(|c| c.lines), whole.lines, "{}", path.display());
                    assert_eq!(sum(|c| c.events), whole.events, "{}", path.display());
                    let expected_before = if off == 0 {
                        vec![0, third.max(1), two_thirds.max(2)]
                    } else {
                        vec![0, two_thirds.max(2)]
                    };
                    assert_eq!(lines_before, expected_before, "{}", path.display());
                    assert!(plane.confirm_tables(), "{}", path.display());
                    assert_eq!(
                        (plane.line_count, &plane.lines),
                        (walked.line_count, &walked.lines)
                    );
                }
            }
        }
        assert!(planes_tried >= 3, "only {planes_tried} planes");
    }
}
