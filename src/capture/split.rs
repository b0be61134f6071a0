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
}
