//! Walking a plane's lines: all of them in file order, the share of one of two
//! scanners, a segment, or chosen lines, each line's events given to a visitor.

use super::walk::visit_line;
use super::{LineInfo, Plane, Walked, MAX_LINES_INDEXED};
use crate::capture::{EventVisitor, LineBoundary, READ_CHUNK};
use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::{XLINE_EVENTS, XPLANE_LINES};
use crate::wire::{StreamReader, StreamValue};

/// What reading one line header costs the second of two scanners, in bytes of events
/// scanned in the same time (a read of the header's page, about a microsecond): the
/// boundary is moved on by that much per line, so both finish together.
const HEADER_WORK_BYTES: u64 = 1 << 10;

/// Which of a plane's lines a walk visits.
#[derive(Clone, Copy)]
pub(super) enum Share<'b> {
    All,
    /// Those before the boundary (the first of two scanners).
    Before(&'b LineBoundary),
    /// Those from the boundary on, which this walk sets at the plane's middle.
    FromMiddle(&'b LineBoundary),
    /// A segment (see `segments.rs`): the lines from offset `from` on, numbered from
    /// 0, up to the first later line whose start `stop` holds for, or to the end.
    Segment {
        from: u64,
        stop: &'b dyn Fn(u64) -> bool,
    },
}

/// How a walk of a plane's lines ended, for the walks that share a plane by segments.
#[derive(Default)]
pub(super) struct WalkEnd {
    /// The layout the walk met, when the plane was read tables-first and the walk's
    /// part of it is to be joined to others' (a walk that met every line sets it on
    /// the plane itself).
    pub(super) walked: Option<Walked>,
    /// The start of the other segment's line the walk stopped before.
    pub(super) stopped_at: Option<u64>,
    /// How many lines the walk met (before the one it stopped at).
    pub(super) lines: usize,
}

/// Reads a plane's lines one at a time (see [`Plane::line_reader`]).
pub struct LineReader<'s>(StreamReader<'s>);

impl Plane {
    /// Walks every line's events in file order, without allocating per event. Corrupt
    /// bytes end the walk there: the events before them have been visited, and the
    /// damage is recorded for the report (see [`Damage`]).
    pub fn visit_events<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_share(src, Share::All, visitor)
    }

    /// The first of two scanners sharing the plane's lines (see
    /// [`split`](super::split)): [`Plane::visit_events`] up to the line where `boundary`
    /// says the second scanner's part starts.
    pub fn visit_events_before<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        boundary: &LineBoundary,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_share(src, Share::Before(boundary), visitor)
    }

    /// The second of two scanners sharing the plane's lines: walks the line headers to
    /// the middle of the plane, sets `boundary` there, and visits the lines from it to
    /// the end. This walk sees every line, so it is the one that confirms tables read
    /// from the plane's end (see [`Plane::confirm_tables`]).
    pub fn visit_events_from_middle<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        boundary: &LineBoundary,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_share(src, Share::FromMiddle(boundary), visitor)
    }

    /// About how many bytes the plane's lines take: known exactly once they are
    /// indexed, else up to where its tables were found, else the whole plane.
    fn line_bytes(&self) -> u64 {
        if let Some(guess) = self.tables_guess {
            return guess.tables_from.saturating_sub(guess.lines_from);
        }
        if self.lines_indexed() {
            return self.lines.iter().map(|&(_, len)| len).sum();
        }
        self.len
    }

    fn visit_share<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        share: Share<'_>,
        visitor: &mut V,
    ) -> Result<(), Error> {
        if let Err(e) = self.walk_lines(src, share, visitor) {
            self.damage.record(&e);
        }
        Ok(())
    }

    pub(super) fn walk_lines<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        share: Share<'_>,
        visitor: &mut V,
    ) -> Result<WalkEnd, Error> {
        let end = self.offset.saturating_add(self.len);
        let from = match share {
            Share::Segment { from, .. } => from,
            _ => self.offset,
        };
        let mut reader = StreamReader::over(src, READ_CHUNK, from, end);
        let mut ordinal = 0usize;
        let mut stopped_at = None;
        let mut claim = Claim::new(self, share);
        // A plane read tables-first learns its layout here (see `confirm_tables`), from
        // a walk that meets every line, or from segment walks that together do.
        let mut layout = match share {
            Share::Before(_) => None,
            _ => self.tables_guess.map(|_| Walked::default()),
        };
        let mut tables_at = None;
        loop {
            let at = reader.position();
            let Some((field, value, at_cut)) = self.next_field(src, &mut reader, end)? else {
                break;
            };
            if at_cut && field != XPLANE_LINES {
                break;
            }
            let (XPLANE_LINES, StreamValue::Bytes { offset, len }) = (field, value) else {
                let Some(guess) = self.tables_guess else {
                    continue;
                };
                if at >= guess.lines_from && tables_at.is_none() {
                    tables_at = Some(at);
                }
                // The tables were read from there on, and hold no lines.
                if tables_at == Some(guess.tables_from) {
                    break;
                }
                continue;
            };
            if let Share::Segment { from, stop } = share {
                // Another segment's start met: its lines from here on.
                if at != from && stop(at) {
                    stopped_at = Some(at);
                    break;
                }
            }
            if let Some(layout) = &mut layout {
                layout.line_count = layout.line_count.saturating_add(1);
                if layout.lines.len() < MAX_LINES_INDEXED {
                    layout.lines.push((offset, len));
                }
            }
            let Some(mine) = claim.takes(ordinal, len) else {
                break;
            };
            if mine {
                let resume = reader.position();
                let line_end = offset.saturating_add(len);
                visit_line(&mut reader, offset, line_end, ordinal, at_cut, visitor)?;
                reader.seek(resume);
            }
            ordinal = ordinal.saturating_add(1);
            if at_cut {
                break;
            }
        }
        claim.finish(ordinal);
        let mut walk = WalkEnd {
            walked: None,
            stopped_at,
            lines: ordinal,
        };
        if let Some(mut layout) = layout {
            layout.tables_at = tables_at.unwrap_or(end);
            if matches!(share, Share::Segment { .. }) {
                walk.walked = Some(layout);
            } else {
                let _ = self.walked.set(layout);
            }
        }
        Ok(walk)
    }

    /// A reader of this plane's lines one at a time ([`Plane::visit_line_alone`]),
    /// reading through `src`: lines visited in file order share its windows.
    pub fn line_reader<'s>(&self, src: &'s dyn ByteSource) -> LineReader<'s> {
        let end = self.offset.saturating_add(self.len);
        LineReader(StreamReader::over(src, READ_CHUNK, self.offset, end))
    }

    /// Visits the one line whose payload is `line.span` (as a walk of the plane met it)
    /// with its ordinal, through `reader` (this plane's): a line a visitor turned down
    /// in a walk, visited apart. A line the plane's cut ends in ends at its last whole
    /// event, as in a walk.
    pub fn visit_line_alone<V: EventVisitor + ?Sized>(
        &self,
        reader: &mut LineReader<'_>,
        line: &LineInfo,
        visitor: &mut V,
    ) -> Result<(), Error> {
        let (start, end) = (line.span.start, line.span.end);
        let plane_end = self.offset.saturating_add(self.len);
        if start < self.offset || end > plane_end || start > end {
            return Err(Error::Corrupt {
                offset: start,
                what: "a line handed over lies outside its plane",
            });
        }
        let at_cut = self.cut.is_some() && end == plane_end;
        visit_line(&mut reader.0, start, end, line.ordinal, at_cut, visitor)
    }

    /// Walks the lines `lines` (by their place in [`Plane::lines`]), giving them their
    /// plane-wide ordinals: a part of [`Plane::visit_events`] that another thread can
    /// do at the same time.
    pub fn visit_lines<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        lines: std::ops::Range<usize>,
        visitor: &mut V,
    ) -> Result<(), Error> {
        self.visit_lines_where(src, |i| lines.contains(&i), visitor)
    }

    /// Calls `f` with the stats of each event whose field starts at one of `offsets`
    /// ([`crate::capture::Event::file_offset`], as a walk of this plane met them), and
    /// its place in `offsets`: a few events read again without walking their lines.
    /// An offset that holds no event is passed over.
    pub fn event_stats_at(
        &self,
        src: &dyn ByteSource,
        offsets: &[u64],
        mut f: impl FnMut(usize, u64, crate::capture::StatRef<'_>),
    ) -> Result<(), Error> {
        // Small reads: the events asked for are few and far apart.
        const NEAR: usize = 4096;
        let end = self.offset.saturating_add(self.len);
        let mut reader = StreamReader::over(src, NEAR, self.offset, end);
        let mut order: Vec<usize> = (0..offsets.len()).collect();
        order.sort_by_key(|&i| offsets.get(i).copied());
        for i in order {
            let Some(&at) = offsets.get(i).filter(|&&at| at >= self.offset && at < end) else {
                continue;
            };
            reader.seek(at);
            let Some((XLINE_EVENTS, StreamValue::Bytes { offset, len })) =
                reader.next_field(end)?
            else {
                continue;
            };
            let raw = reader.bytes(offset, len)?;
            let event = super::Event::parse(raw).map_err(|e| Error::Corrupt {
                offset,
                what: e.describe(),
            })?;
            event.for_each_stat(|id, v| f(i, id, v));
        }
        Ok(())
    }

    /// Walks the indexed lines whose place in [`Plane::lines`] passes `wanted`, without
    /// reading the others at all.
    pub fn visit_lines_where<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        wanted: impl Fn(usize) -> bool,
        visitor: &mut V,
    ) -> Result<(), Error> {
        let end = self.offset.saturating_add(self.len);
        let mut reader = StreamReader::over(src, READ_CHUNK, self.offset, end);
        let lines = self.lines.iter().enumerate().filter(|&(i, _)| wanted(i));
        for (i, &(offset, len)) in lines {
            let line_end = offset.saturating_add(len);
            let at_cut = self.cut.is_some() && line_end == end;
            if let Err(e) = visit_line(&mut reader, offset, line_end, i, at_cut, visitor) {
                // As in `visit_events`: stop at the damage, keep what came before.
                self.damage.record(&e);
                break;
            }
        }
        Ok(())
    }
}

/// Which lines a walk visits, decided line by line as the walk meets them.
struct Claim<'b> {
    share: Share<'b>,
    /// The second scanner's: its lines' bytes (only it needs them: summing an index is
    /// not free), bytes of the lines before this one, and its first line.
    line_bytes: u64,
    passed: u64,
    first_line: Option<usize>,
}

impl<'b> Claim<'b> {
    fn new(plane: &Plane, share: Share<'b>) -> Self {
        let line_bytes = match share {
            Share::FromMiddle(_) => plane.line_bytes(),
            _ => 0,
        };
        Claim {
            share,
            line_bytes,
            passed: 0,
            first_line: None,
        }
    }

    /// Whether the walk visits line `ordinal`, of `len` bytes; `None` when the walk
    /// ends before it (the first scanner's share is over).
    fn takes(&mut self, ordinal: usize, len: u64) -> Option<bool> {
        match self.share {
            Share::All | Share::Segment { .. } => Some(true),
            Share::Before(boundary) => boundary.first_takes(ordinal).then_some(true),
            Share::FromMiddle(boundary) => {
                // The middle by work: this walk also reads the headers of the first
                // scanner's lines.
                let walk = (ordinal as u64).saturating_mul(HEADER_WORK_BYTES);
                let past = self.passed.saturating_mul(2) >= self.line_bytes.saturating_add(walk);
                if self.first_line.is_none() && past {
                    self.first_line = boundary.second_claims(ordinal);
                }
                self.passed = self.passed.saturating_add(len);
                Some(self.first_line.is_some_and(|first| ordinal >= first))
            }
        }
    }

    /// Ends the walk of `lines` lines: with no line past the middle (or none at all),
    /// the first scanner takes them all.
    fn finish(&self, lines: usize) {
        if let Share::FromMiddle(boundary) = self.share {
            if self.first_line.is_none() {
                boundary.second_claims(lines);
            }
        }
    }
}
