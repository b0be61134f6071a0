//! Two scanners sharing a plane read tables-first without the second walking the
//! first's lines: the second finds a line start near the middle of the plane's bytes
//! by its shape and claims it ([`LineClaim`]); the first scans from the start and
//! stops where it meets that offset, which proves it a line start. Walking the first
//! half's line headers to find the middle, as [`Plane::visit_events_from_middle`] does,
//! maps every page of that half: on a plane of small lines it costs the second scanner
//! as much as scanning a fifth of the plane.

use super::{Plane, Share, Walked, MAX_LINES_INDEXED};
use crate::capture::{EventVisitor, LineClaim, READ_CHUNK};
use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::{
    XLINE_DISPLAY_ID, XLINE_DISPLAY_NAME, XLINE_DURATION_PS, XLINE_EVENTS, XLINE_ID, XLINE_NAME,
    XLINE_TIMESTAMP_NS, XPLANE_LINES_TAG,
};
use crate::wire::{decode_varint, StreamReader};

/// How far past the middle the second scanner looks for a line start.
const SEARCH_BYTES: usize = 1 << 20;

/// How many lines in a row, from a candidate on, must have a line's shape (or reach the
/// end of the lines) for the candidate to be claimed. Bytes inside events rarely chain
/// like that; when they do, the first scanner does not meet the claim and reads on.
const CHAIN: usize = 8;

/// What the first of two scanners sharing a plane by a claim walked.
pub struct FirstWalk {
    stopped_at: Option<usize>,
    walked: Option<Walked>,
}

/// What the second walked from its claim: its part of the plane's layout, and the damage
/// it met, which counts only once the claim is proved.
pub struct SecondWalk {
    walked: Option<Walked>,
    damage: Option<Error>,
}

impl Plane {
    /// Whether two scanners can share this plane by a claim: read tables-first (so its
    /// lines end where its tables start) and whole.
    pub fn shares_by_claim(&self) -> bool {
        self.tables_guess.is_some() && self.cut.is_none()
    }

    /// The first scanner: [`Plane::visit_events`] up to the line the second claimed,
    /// or to the end if it meets none.
    pub fn visit_events_until_claim<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        claim: &LineClaim,
        visitor: &mut V,
    ) -> FirstWalk {
        match self.walk_lines(src, Share::BeforeClaim(claim), visitor) {
            Ok(end) => FirstWalk {
                stopped_at: end.stopped_at,
                walked: end.walked,
            },
            Err(e) => {
                // As in one walk: the damage ends the plane here, and the second's part
                // (after it) is never joined.
                self.damage.record(&e);
                FirstWalk {
                    stopped_at: None,
                    walked: None,
                }
            }
        }
    }

    /// The second scanner: finds and claims a line start near the middle, and visits
    /// the lines from it to the end, numbered from 0; `None` when it claimed nothing
    /// (no line start found, or the first scanner already past it).
    pub fn visit_events_from_claim<V: EventVisitor + ?Sized>(
        &self,
        src: &dyn ByteSource,
        claim: &LineClaim,
        visitor: &mut V,
    ) -> Option<SecondWalk> {
        let guess = self.tables_guess.filter(|_| self.shares_by_claim())?;
        let (lines_from, lines_end) = (guess.lines_from, guess.tables_from);
        let middle = lines_from.saturating_add(lines_end.saturating_sub(lines_from) / 2);
        let at = line_start_near(src, middle, lines_end)?;
        if !claim.second_claims(at) {
            return None;
        }
        Some(match self.walk_lines(src, Share::FromClaim(at), visitor) {
            Ok(end) => SecondWalk {
                walked: end.walked,
                damage: None,
            },
            Err(e) => SecondWalk {
                walked: None,
                damage: Some(e),
            },
        })
    }

    /// Joins the two walks. When the first stopped at the claim, the claim is proved:
    /// the plane's layout is the two walks' together, the second's damage is recorded,
    /// and the returned number of lines before the claim is where the second's line
    /// ordinals start. `None`: the second's part is to be dropped (the first read every
    /// line itself, or stopped at damage).
    pub fn join_claimed(&self, first: FirstWalk, second: Option<SecondWalk>) -> Option<usize> {
        let lines_before = first.stopped_at?;
        let second = second?;
        if let Some(e) = &second.damage {
            self.damage.record(e);
        }
        if let (Some(mut walked), Some(later)) = (first.walked, second.walked) {
            walked.line_count = walked.line_count.saturating_add(later.line_count);
            let room = MAX_LINES_INDEXED.saturating_sub(walked.lines.len());
            walked.lines.extend(later.lines.into_iter().take(room));
            walked.tables_at = later.tables_at;
            let _ = self.walked.set(walked);
        }
        Some(lines_before)
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

    /// A claim at a true line start splits the lines between the two walks, and their
    /// layouts together confirm the tables; a claim one byte off is passed over by the
    /// first walk, which then reads every line itself, and nothing of the second is
    /// joined.
    #[test]
    fn a_claim_splits_the_lines_where_true_and_is_dropped_where_not() {
        let mut planes_tried = 0;
        for path in crate::real_captures::all() {
            let src = FileSource::open(&path).expect("open");
            for at in CaptureIndex::scan(&src).expect("index").planes {
                let walked = Plane::open(&src, &at).expect("walk");
                if !walked.lines_indexed() || walked.lines.len() < 2 {
                    continue;
                }
                let Ok(first_guess) = Plane::open_tables_first(&src, &at) else {
                    continue;
                };
                if !first_guess.shares_by_claim() {
                    continue;
                }
                planes_tried += 1;
                let mut whole = Count::default();
                walked.visit_events(&src, &mut whole).expect("walk");
                let keys = line_keys(&walked);
                let middle = keys.len() / 2;

                let mut plane = first_guess;
                let claim = LineClaim::default();
                assert!(claim.second_claims(keys[middle]));
                let (mut first, mut second) = (Count::default(), Count::default());
                let later = plane.walk_lines(&src, Share::FromClaim(keys[middle]), &mut second);
                let later = later.map(|end| SecondWalk {
                    walked: end.walked,
                    damage: None,
                });
                let walk = plane.visit_events_until_claim(&src, &claim, &mut first);
                assert_eq!(plane.join_claimed(walk, later.ok()), Some(middle));
                // (Lines without events are not announced to visitors.)
                assert_eq!(first.lines + second.lines, whole.lines);
                assert_eq!(first.events + second.events, whole.events);
                assert!(plane.confirm_tables(), "{}", path.display());
                assert_eq!(
                    (plane.line_count, &plane.lines),
                    (walked.line_count, &walked.lines)
                );

                let plane = Plane::open_tables_first(&src, &at).expect("open");
                let claim = LineClaim::default();
                assert!(claim.second_claims(keys[middle] + 1));
                let mut alone = Count::default();
                let walk = plane.visit_events_until_claim(&src, &claim, &mut alone);
                let fake = SecondWalk {
                    walked: None,
                    damage: None,
                };
                assert_eq!(plane.join_claimed(walk, Some(fake)), None);
                assert_eq!((alone.lines, alone.events), (whole.lines, whole.events));
            }
        }
        assert!(planes_tried >= 3, "only {planes_tried} planes");
    }
}
