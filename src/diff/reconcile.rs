//! How the matched buffers add up to the change of the peak.
//!
//! A plan's `live_at_peak` lists the heap's temporaries at the heap peak and, beside
//! them, one buffer per allocation held for the whole program (parameters, outputs,
//! constants). So the list adds up to `peak_bytes` (heap peak + held memory), not to
//! the heap peak alone: that is the basis the rows are reconciled against, and the
//! heap's share of the change is given apart (`heap_delta_bytes`). A list of
//! temporaries only (a plan from an XLA dump's text, say) is reconciled against the
//! heap peak. Whatever the list leaves out (it is cut at 200 buffers) is counted as
//! `unlisted`, so the equation always holds, and `exact` says whether that was needed.

use super::model::{Basis, BufferChange, Change, Reconciliation};
use crate::report::model::{Category, Plan};

/// Bytes, in i128 so that no sum of u64s overflows before the result is saturated.
fn wide(x: u64) -> i128 {
    i128::from(x)
}

fn narrow(x: i128) -> i64 {
    i64::try_from(x).unwrap_or(if x < 0 { i64::MIN } else { i64::MAX })
}

/// The sums over the rows: (matched delta, only-before bytes, only-after bytes).
pub fn sums(rows: &[BufferChange]) -> (i64, u64, u64) {
    let mut matched: i128 = 0;
    let mut only_before: u64 = 0;
    let mut only_after: u64 = 0;
    for r in rows {
        match r.change {
            Change::OnlyBefore => only_before = only_before.saturating_add(r.before_bytes),
            Change::OnlyAfter => only_after = only_after.saturating_add(r.after_bytes),
            _ => matched += wide(r.after_bytes) - wide(r.before_bytes),
        }
    }
    (narrow(matched), only_before, only_after)
}

fn listed(plan: &Plan) -> i128 {
    plan.live_at_peak.iter().map(|b| wide(b.bytes)).sum()
}

/// Reconciles the rows (every buffer of both plans' lists once) against the plans.
pub fn reconcile(before: &Plan, after: &Plan, rows: &[BufferChange]) -> Reconciliation {
    let holds_held_memory = |p: &Plan| {
        p.live_at_peak
            .iter()
            .any(|b| b.category != Category::Temporary)
    };
    let basis = if holds_held_memory(before) || holds_held_memory(after) {
        Basis::Peak
    } else {
        Basis::HeapPeak
    };
    let figure = |p: &Plan| {
        wide(match basis {
            Basis::Peak => p.peak_bytes,
            Basis::HeapPeak => p.heap_peak_bytes,
        })
    };
    let (matched, only_before, only_after) = sums(rows);
    let listed_delta = i128::from(matched) + wide(only_after) - wide(only_before);
    let unlisted_before = figure(before) - listed(before);
    let unlisted_after = figure(after) - listed(after);
    let temporary = |c: Option<Category>| c == Some(Category::Temporary);
    let heap_delta: i128 = rows
        .iter()
        .map(|r| {
            let a = if temporary(r.category_after) {
                wide(r.after_bytes)
            } else {
                0
            };
            let b = if temporary(r.category_before) {
                wide(r.before_bytes)
            } else {
                0
            };
            a - b
        })
        .sum();
    Reconciliation {
        basis,
        basis_delta_bytes: narrow(figure(after) - figure(before)),
        listed_delta_bytes: narrow(listed_delta),
        unlisted_before_bytes: narrow(unlisted_before),
        unlisted_after_bytes: narrow(unlisted_after),
        exact: unlisted_before == 0 && unlisted_after == 0,
        heap_delta_bytes: narrow(heap_delta),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::deltas;
    use crate::report::model::{LiveBuffer, Role};

    fn buf(name: &str, bytes: u64, category: Category) -> LiveBuffer {
        LiveBuffer {
            name: name.into(),
            opcode: "fusion".into(),
            shape: format!("f32[{bytes}]"),
            bytes,
            unpadded_bytes: bytes,
            category,
            role: Role::Other,
            source: String::new(),
            op_name: String::new(),
            memory_space: 0,
            shared_by: Vec::new(),
        }
    }

    fn plan(heap: &[u64], held: &[u64]) -> Plan {
        let mut p = Plan::default();
        for (i, &b) in heap.iter().enumerate() {
            p.live_at_peak
                .push(buf(&format!("t{i}"), b, Category::Temporary));
        }
        for (i, &b) in held.iter().enumerate() {
            p.live_at_peak
                .push(buf(&format!("p{i}"), b, Category::Parameter));
        }
        p.heap_peak_bytes = heap.iter().sum();
        p.indefinite_bytes = held.iter().sum();
        p.peak_bytes = p.heap_peak_bytes + p.indefinite_bytes;
        p
    }

    #[test]
    fn a_list_with_held_memory_adds_up_to_the_peak() {
        let (b, a) = (plan(&[100, 40], &[8]), plan(&[100, 7], &[8, 16]));
        let rows = deltas::buffers(&b.live_at_peak, &a.live_at_peak);
        let r = reconcile(&b, &a, &rows);
        assert_eq!(r.basis, Basis::Peak);
        assert!(r.exact);
        assert_eq!(r.listed_delta_bytes, r.basis_delta_bytes);
        assert_eq!(r.basis_delta_bytes, (107 + 24) - (140 + 8));
        assert_eq!(r.heap_delta_bytes, 107 - 140);
        let (matched, only_before, only_after) = sums(&rows);
        assert_eq!(
            matched + only_after as i64 - only_before as i64,
            r.listed_delta_bytes
        );
    }

    #[test]
    fn temporaries_alone_add_up_to_the_heap_peak_and_a_cut_list_says_so() {
        let (b, mut a) = (plan(&[100, 40], &[]), plan(&[100, 7], &[]));
        // The after list was cut: 5 bytes of its heap peak are not listed.
        a.heap_peak_bytes += 5;
        a.peak_bytes += 5;
        let rows = deltas::buffers(&b.live_at_peak, &a.live_at_peak);
        let r = reconcile(&b, &a, &rows);
        assert_eq!(r.basis, Basis::HeapPeak);
        assert!(!r.exact);
        assert_eq!((r.unlisted_before_bytes, r.unlisted_after_bytes), (0, 5));
        assert_eq!(
            r.listed_delta_bytes + r.unlisted_after_bytes - r.unlisted_before_bytes,
            r.basis_delta_bytes
        );
    }
}
