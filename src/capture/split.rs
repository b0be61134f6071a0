//! Two scanners over one plane's lines, at the same time, without an index of the
//! lines first: the first walks from the plane's start; the second walks line headers
//! (cheap: it skips each line's events) to the middle of the plane, sets the boundary
//! there, and scans from it to the end. The first stops at the boundary. Neither waits
//! for the other; a lock per line start keeps the boundary at or past the first
//! scanner's progress, so every line is scanned by exactly one of them.

use std::sync::{Mutex, PoisonError};

/// Where the two scanners of a plane part (see the module docs).
#[derive(Debug, Default)]
pub struct LineBoundary(Mutex<Progress>);

#[derive(Debug, Default)]
struct Progress {
    /// The first line the first scanner has not started.
    first_next: usize,
    /// The first line of the second scanner's part, once set.
    boundary: Option<usize>,
}

impl LineBoundary {
    /// For the first scanner, before line `line`: whether the line is its to scan.
    pub fn first_takes(&self, line: usize) -> bool {
        let mut progress = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if progress.boundary.is_some_and(|b| line >= b) {
            return false;
        }
        progress.first_next = progress.first_next.max(line.saturating_add(1));
        true
    }

    /// For the second scanner: sets the boundary at line `line` unless the first
    /// scanner has started it already; the boundary, once set.
    pub fn second_claims(&self, line: usize) -> Option<usize> {
        let mut progress = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if progress.boundary.is_none() && progress.first_next <= line {
            progress.boundary = Some(line);
        }
        progress.boundary
    }

    /// The boundary, if the second scanner has set it.
    pub fn boundary(&self) -> Option<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .boundary
    }
}

/// Where two scanners of a plane read tables-first part without either walking the
/// other's lines: the second finds a line start near the middle of the plane's bytes
/// by its shape (see `Plane::visit_events_from_claim`) and claims it; the first scans
/// from the start and stops when it reaches that very offset, which proves the claim
/// a line start. A first scanner that passes over the offset without meeting it (the
/// bytes only looked like a line) goes on to the end, and the second's part is
/// dropped: the result is always what one scanner finds.
#[derive(Debug, Default)]
pub struct LineClaim(Mutex<Claim>);

#[derive(Debug, Default)]
struct Claim {
    /// Where the last line the first scanner started starts.
    first_at: Option<u64>,
    /// The offset the second scanner claimed.
    claimed: Option<u64>,
    /// The first scanner passed the claimed offset without a line starting there.
    missed: bool,
}

impl LineClaim {
    /// For the first scanner, before the line starting at `offset`: whether it is its
    /// to scan (false: the second claimed it, and the first stops here).
    pub fn first_takes(&self, offset: u64) -> bool {
        let mut claim = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let (Some(claimed), false) = (claim.claimed, claim.missed) {
            if offset == claimed {
                return false;
            }
            claim.missed = offset > claimed;
        }
        claim.first_at = Some(offset);
        true
    }

    /// For the second scanner: claims the lines from `offset` on, unless the first
    /// scanner has started a line there or later already.
    pub fn second_claims(&self, offset: u64) -> bool {
        let mut claim = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let free = claim.claimed.is_none() && claim.first_at.is_none_or(|at| at < offset);
        if free {
            claim.claimed = Some(offset);
        }
        free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boundary_is_never_behind_the_first_scanner() {
        let b = LineBoundary::default();
        assert!(b.first_takes(0));
        assert!(b.first_takes(1));
        // The first scanner has started line 1: the boundary cannot be there.
        assert_eq!(b.second_claims(1), None);
        assert_eq!(b.second_claims(2), Some(2));
        // Once set it stays, and the first scanner stops there.
        assert_eq!(b.second_claims(5), Some(2));
        assert!(b.first_takes(1));
        assert!(!b.first_takes(2));
        assert!(!b.first_takes(3));
        assert_eq!(b.boundary(), Some(2));
    }

    #[test]
    fn a_claim_holds_only_where_the_first_scanner_meets_a_line() {
        let met = LineClaim::default();
        assert!(met.first_takes(10));
        // The first scanner has started the line at 10: too late to claim it.
        assert!(!met.second_claims(10));
        assert!(met.second_claims(30));
        assert!(!met.second_claims(40));
        assert!(met.first_takes(20));
        assert!(!met.first_takes(30));

        let passed = LineClaim::default();
        assert!(passed.second_claims(25));
        assert!(passed.first_takes(0));
        assert!(passed.first_takes(20));
        // 25 was not a line start: the first scanner takes every line after it.
        assert!(passed.first_takes(40));
        assert!(passed.first_takes(25));
    }
}
