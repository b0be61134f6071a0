//! The temporary heap over the schedule, rebuilt from text: at each schedule position,
//! the bytes of the temporary allocation that live values cover.
//!
//! XProf replays the heap simulator's trace, which only the proto holds. The text has
//! what the trace was made from: each value's offset and size in the allocation, and
//! its live range. Values of one buffer, or an output written in place over an operand,
//! share their bytes; counting the *union* of the live values' byte ranges (rather
//! than their sum) counts such shared bytes once, as the trace's shares do.

/// One value in the allocation: its bytes `[offset, offset + size)`, live over the
/// schedule positions `[start, end]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub offset: u64,
    pub size: u64,
    pub start: u64,
    pub end: u64,
}

/// The heap along the schedule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Heap {
    /// `(position, bytes)` wherever the heap changes, in order.
    pub changes: Vec<(u64, u64)>,
    /// The largest heap, and the first position that reaches it.
    pub peak: u64,
    pub peak_position: u64,
}

impl Heap {
    /// The heap at a position (the last change at or before it).
    pub fn at(&self, position: u64) -> u64 {
        let after = self.changes.partition_point(|&(p, _)| p <= position);
        after
            .checked_sub(1)
            .and_then(|i| self.changes.get(i))
            .map(|&(_, bytes)| bytes)
            .unwrap_or(0)
    }
}

/// Sweeps the schedule: each value enters at its start and leaves after its end.
pub fn replay(intervals: &[Interval]) -> Heap {
    let usable: Vec<&Interval> = intervals
        .iter()
        .filter(|v| v.size > 0 && v.start <= v.end && v.offset.checked_add(v.size).is_some())
        .collect();
    let mut edges: Vec<u64> = usable
        .iter()
        .flat_map(|v| [v.offset, v.offset.saturating_add(v.size)])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let mut cover = Cover::new(edges);
    // (position, +1 enters / -1 leaves, value)
    let mut events: Vec<(u64, i64, usize)> = Vec::with_capacity(usable.len().saturating_mul(2));
    for (i, v) in usable.iter().enumerate() {
        events.push((v.start, 1, i));
        if let Some(after) = v.end.checked_add(1) {
            events.push((after, -1, i));
        }
    }
    events.sort_unstable();
    let mut heap = Heap::default();
    let mut k = 0;
    while let Some(&(position, _, _)) = events.get(k) {
        while let Some(&(p, delta, i)) = events.get(k) {
            if p != position {
                break;
            }
            if let Some(v) = usable.get(i) {
                cover.add(v.offset, v.offset.saturating_add(v.size), delta);
            }
            k = k.saturating_add(1);
        }
        let bytes = cover.covered();
        if heap.changes.last().map(|&(_, b)| b) != Some(bytes) {
            heap.changes.push((position, bytes));
        }
        if bytes > heap.peak {
            heap.peak = bytes;
            heap.peak_position = position;
        }
    }
    heap
}

/// A segment tree over the allocation's byte edges that keeps how many values cover
/// each stretch and the bytes covered at least once.
struct Cover {
    edges: Vec<u64>,
    count: Vec<i64>,
    covered: Vec<u64>,
}

impl Cover {
    fn new(edges: Vec<u64>) -> Self {
        let nodes = edges.len().saturating_mul(4).max(4);
        Self {
            edges,
            count: vec![0; nodes],
            covered: vec![0; nodes],
        }
    }

    fn covered(&self) -> u64 {
        self.covered.get(1).copied().unwrap_or(0)
    }

    /// Adds `delta` to the cover count of the bytes `[from, to)`.
    fn add(&mut self, from: u64, to: u64, delta: i64) {
        let (Ok(l), Ok(r)) = (
            self.edges.binary_search(&from),
            self.edges.binary_search(&to),
        ) else {
            return;
        };
        let segments = self.edges.len().saturating_sub(1);
        self.update(1, 0, segments, (l, r), delta);
    }

    /// The node `node` spans edge segments `[lo, hi)`.
    fn update(&mut self, node: usize, lo: usize, hi: usize, range: (usize, usize), delta: i64) {
        let (l, r) = range;
        if r <= lo || hi <= l || lo >= hi {
            return;
        }
        if l <= lo && hi <= r {
            if let Some(c) = self.count.get_mut(node) {
                *c = c.saturating_add(delta);
            }
        } else {
            let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
            let left = node.saturating_mul(2);
            self.update(left, lo, mid, range, delta);
            self.update(left.saturating_add(1), mid, hi, range, delta);
        }
        self.pull(node, lo, hi);
    }

    fn pull(&mut self, node: usize, lo: usize, hi: usize) {
        let counted = self.count.get(node).copied().unwrap_or(0) > 0;
        let bytes = if counted {
            let edge = |i: usize| self.edges.get(i).copied().unwrap_or(0);
            edge(hi).saturating_sub(edge(lo))
        } else if hi.saturating_sub(lo) <= 1 {
            0
        } else {
            let left = node.saturating_mul(2);
            let child = |n: usize| self.covered.get(n).copied().unwrap_or(0);
            child(left).saturating_add(child(left.saturating_add(1)))
        };
        if let Some(c) = self.covered.get_mut(node) {
            *c = bytes;
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    fn v(offset: u64, size: u64, start: u64, end: u64) -> Interval {
        Interval {
            offset,
            size,
            start,
            end,
        }
    }

    #[test]
    fn sums_disjoint_values_and_counts_shared_bytes_once() {
        // Two values side by side, then an in-place output over the first.
        let heap = replay(&[v(0, 100, 0, 2), v(100, 50, 1, 3), v(0, 100, 2, 4)]);
        assert_eq!(heap.peak, 150);
        assert_eq!(heap.peak_position, 1);
        assert_eq!(heap.at(0), 100);
        assert_eq!(heap.at(3), 150);
        assert_eq!(heap.at(4), 100);
        assert_eq!(heap.at(5), 0);
        assert_eq!(heap.at(9), 0);
    }

    #[test]
    fn partial_overlaps_count_their_union() {
        let heap = replay(&[v(0, 100, 0, 0), v(50, 100, 0, 0), v(300, 10, 0, 0)]);
        assert_eq!(heap.peak, 160);
    }

    #[test]
    fn hostile_intervals_are_skipped() {
        let heap = replay(&[
            v(u64::MAX, 10, 0, 1),
            v(0, 0, 0, 1),
            v(0, 8, 5, 1),
            v(0, 8, 0, u64::MAX),
        ]);
        assert_eq!(heap.peak, 8);
        assert_eq!(replay(&[]), Heap::default());
    }

    #[test]
    fn many_values_stay_exact() {
        let values: Vec<Interval> = (0..1000).map(|i| v(i * 8, 8, i, i + 1)).collect();
        let heap = replay(&values);
        assert_eq!(heap.peak, 16);
        assert_eq!(heap.at(999), 16);
        assert_eq!(heap.at(1000), 8);
    }
}
