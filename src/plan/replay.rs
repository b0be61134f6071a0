//! Replays a heap-simulator trace the way XProf's Memory Viewer does
//! (docs/memory-viewer.md#the-replay): reference counts on the root of each buffer's
//! SHARE_WITH chain, a new peak only when the heap strictly exceeds the old one.

use std::collections::HashMap;

use crate::proto::xla::HeapSimulatorTrace;

const ALLOC: i32 = 0;
const FREE: i32 = 1;
const SHARE_WITH: i32 = 2;

/// Sizes of one logical buffer: padded (the plan's) and unpadded (from its shape).
#[derive(Debug, Clone, Copy, Default)]
pub struct BufferSizes {
    pub padded: u64,
    pub unpadded: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Heap bytes before each event, then after the last (N + 1 points).
    pub heap: Vec<u64>,
    /// The instruction of each event ("" for the final point).
    pub instructions: Vec<String>,
    pub peak: u64,
    pub peak_unpadded: u64,
    pub peak_index: usize,
    /// Buffers live at the peak, in allocation order, each shown as its display
    /// substitute (the buffer that reused a freed canonical's memory).
    pub live_at_peak: Vec<i64>,
    /// Problems met on the way (double free, unknown kind); the replay goes on.
    pub problems: Vec<String>,
}

struct State<'s> {
    sizes: &'s dyn Fn(i64) -> Option<BufferSizes>,
    /// SHARE_WITH edges, buffer → the buffer whose memory it shares. Kept acyclic (a
    /// share that would close a cycle is refused) and path-compressed, so finding a
    /// root is near constant time even for a hostile chain of a million shares.
    canonical: HashMap<i64, i64>,
    refcount: HashMap<i64, i64>,
    display: HashMap<i64, i64>,
    /// Live buffers in allocation order; a freed slot becomes `None`.
    live: Vec<Option<i64>>,
    /// Where each buffer's live slots are, so a free is O(1) however many are live.
    slots: HashMap<i64, Vec<usize>>,
    heap: u64,
    unpadded: u64,
}

impl State<'_> {
    fn root(&mut self, id: i64) -> i64 {
        let mut root = id;
        // The graph is acyclic; the bound only guards the loop should that ever break.
        for _ in 0..=self.canonical.len() {
            match self.canonical.get(&root) {
                Some(&next) if next != root => root = next,
                _ => break,
            }
        }
        // Path compression: point every buffer on the way straight at the root.
        let mut at = id;
        while at != root {
            match self.canonical.insert(at, root) {
                Some(next) if next != root => at = next,
                _ => break,
            }
        }
        root
    }

    /// Records that `id` shares `canonical`'s memory; returns the root that holds it,
    /// or `None` when the share would make a cycle (then nothing is recorded).
    fn share(&mut self, id: i64, canonical: i64) -> Option<i64> {
        self.canonical.remove(&id);
        let root = self.root(canonical);
        if root == id {
            return None;
        }
        self.canonical.insert(id, root);
        Some(root)
    }

    fn increase(&mut self, id: i64) {
        let s = (self.sizes)(id).unwrap_or_default();
        self.slots.entry(id).or_default().push(self.live.len());
        self.live.push(Some(id));
        self.heap = self.heap.saturating_add(s.padded);
        self.unpadded = self.unpadded.saturating_add(s.unpadded);
    }

    fn decrease(&mut self, id: i64) -> bool {
        let s = (self.sizes)(id).unwrap_or_default();
        if let Some(slot) = self.slots.get_mut(&id).and_then(Vec::pop) {
            if let Some(entry) = self.live.get_mut(slot) {
                *entry = None;
            }
        }
        let ok = self.heap >= s.padded;
        self.heap = self.heap.saturating_sub(s.padded);
        self.unpadded = self.unpadded.saturating_sub(s.unpadded);
        ok
    }
}

/// Most problems listed in a replay's note.
const PROBLEMS_KEPT: usize = 8;

fn problem(out: &mut Replay, text: impl FnOnce() -> String) {
    if out.problems.len() < PROBLEMS_KEPT {
        out.problems.push(text());
    }
}

/// Replays `trace`. `sizes` gives a buffer's sizes, `None` for an unknown buffer
/// (whose events are skipped, as XProf does). With `stop_at`, stops before that event
/// and returns the live set there (used to rebuild the peak's live list cheaply).
pub fn replay(trace: &HeapSimulatorTrace, sizes: &dyn Fn(i64) -> Option<BufferSizes>) -> Replay {
    let mut out = run(trace, sizes, None);
    if !out.heap.is_empty() {
        let at_peak = run(trace, sizes, Some(out.peak_index.saturating_add(1)));
        out.live_at_peak = at_peak.live_at_peak;
    }
    out
}

fn run(
    trace: &HeapSimulatorTrace,
    sizes: &dyn Fn(i64) -> Option<BufferSizes>,
    stop_at: Option<usize>,
) -> Replay {
    let mut st = State {
        sizes,
        canonical: HashMap::new(),
        refcount: HashMap::new(),
        display: HashMap::new(),
        live: Vec::new(),
        slots: HashMap::new(),
        heap: 0,
        unpadded: 0,
    };
    let mut out = Replay::default();
    let record = stop_at.is_none();
    for (i, event) in trace.events.iter().enumerate() {
        if stop_at == Some(i) {
            break;
        }
        if record {
            out.heap.push(st.heap);
            out.instructions.push(event.instruction_name.clone());
        }
        let id = event.buffer_id;
        if sizes(id).is_none() {
            continue;
        }
        match event.kind {
            ALLOC => {
                let count = st.refcount.entry(id).or_insert(0);
                *count = count.saturating_add(1);
                st.increase(id);
                if st.heap > out.peak {
                    out.peak = st.heap;
                    out.peak_unpadded = st.unpadded;
                    out.peak_index = i;
                }
            }
            FREE => {
                let root = st.root(id);
                let count = st.refcount.entry(root).or_insert(0);
                *count = count.saturating_sub(1);
                if *count < 0 {
                    // Keep the count at zero so a later allocation is counted afresh.
                    *count = 0;
                    problem(&mut out, || {
                        format!("buffer {id} freed more often than allocated (event {i})")
                    });
                } else if *count == 0 && !st.decrease(root) {
                    problem(&mut out, || format!("heap went below zero at event {i}"));
                }
            }
            SHARE_WITH => {
                let canonical = event.share_with_canonical_id;
                if st.canonical.contains_key(&id) {
                    problem(&mut out, || {
                        format!("buffer {id} shares memory twice (event {i})")
                    });
                }
                let Some(root) = st.share(id, canonical) else {
                    problem(&mut out, || {
                        format!(
                            "buffer {id} shares with {canonical}, which already shares {id}'s memory: a cycle (event {i})"
                        )
                    });
                    continue;
                };
                let count = st.refcount.entry(root).or_insert(0);
                *count = count.saturating_add(1);
                if *count == 1 {
                    st.display.insert(root, id);
                    st.increase(root);
                    if st.heap > out.peak {
                        out.peak = st.heap;
                        out.peak_unpadded = st.unpadded;
                        out.peak_index = i;
                    }
                }
            }
            other => {
                problem(&mut out, || {
                    format!("unknown heap event kind {other} at event {i}")
                });
            }
        }
    }
    if record {
        out.heap.push(st.heap);
        out.instructions.push(String::new());
    }
    out.live_at_peak = st
        .live
        .iter()
        .flatten()
        .map(|id| st.display.get(id).copied().unwrap_or(*id))
        .collect();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::proto::xla::heap_simulator_trace::Event;

    fn ev(kind: i32, id: i64, canonical: i64) -> Event {
        Event {
            kind,
            buffer_id: id,
            share_with_canonical_id: canonical,
            ..Default::default()
        }
    }

    #[test]
    fn share_with_extends_the_canonical_lifetime() {
        let trace = HeapSimulatorTrace {
            events: vec![
                ev(ALLOC, 1, 0),
                ev(SHARE_WITH, 2, 1),
                ev(FREE, 1, 0),
                ev(FREE, 2, 0),
            ],
            ..Default::default()
        };
        let sizes = |id: i64| match id {
            1 | 2 => Some(BufferSizes {
                padded: 100,
                unpadded: 80,
            }),
            _ => None,
        };
        let r = replay(&trace, &sizes);
        assert_eq!(r.peak, 100);
        assert_eq!(r.heap, vec![0, 100, 100, 100, 0]);
        assert_eq!(r.live_at_peak, vec![1]);
    }

    #[test]
    fn reused_memory_is_shown_as_the_sharing_buffer() {
        // 1 is freed, then 2 shares 1's memory: the peak live buffer is shown as 2.
        let trace = HeapSimulatorTrace {
            events: vec![
                ev(ALLOC, 1, 0),
                ev(FREE, 1, 0),
                ev(SHARE_WITH, 2, 1),
                ev(ALLOC, 3, 0),
            ],
            ..Default::default()
        };
        let sizes = |_id: i64| {
            Some(BufferSizes {
                padded: 10,
                unpadded: 10,
            })
        };
        let r = replay(&trace, &sizes);
        assert_eq!(r.peak, 20);
        assert_eq!(r.live_at_peak, vec![2, 3]);
    }

    #[test]
    fn double_free_is_reported_not_fatal() {
        let trace = HeapSimulatorTrace {
            events: vec![ev(ALLOC, 1, 0), ev(FREE, 1, 0), ev(FREE, 1, 0)],
            ..Default::default()
        };
        let sizes = |_id: i64| {
            Some(BufferSizes {
                padded: 10,
                unpadded: 10,
            })
        };
        let r = replay(&trace, &sizes);
        assert_eq!(r.peak, 10);
        assert_eq!(r.problems.len(), 1);
    }
}
