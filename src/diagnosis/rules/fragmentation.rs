//! Fragmentation: the allocator had more free memory than the request, but no piece that
//! large. Read from the BFC allocator's statistics, a banked memory's per-bank figures
//! (Tenstorrent), or the TPU runtime's free and reservable memory.

use crate::diagnosis::line::{Context, Line};
use crate::evidence::message::{OomKind, OomMessage};
use crate::report::model::{DiagnosisId, Label};
use crate::units::size;

use super::held;

/// The allocator had more free memory than the request, but no piece that large: the
/// BFC allocator's free memory inside the regions it holds (`total_region_allocated −
/// InUse`, or `Limit − InUse` with a largest free block below the request, or stating
/// neither its regions nor its largest block), or the TPU runtime's free memory above
/// the request while what it can reserve in one piece is below it. A request known only
/// from its tensor's shape makes the line an estimate.
pub fn fragmentation(cx: &Context<'_>) -> Option<Line> {
    let m = cx.failure_message()?;
    let (request, label) = match (m.requested_bytes, m.requested_bytes_from_shape) {
        (Some(r), _) => (r, Label::Read),
        (None, Some(r)) => (r, Label::Estimated),
        (None, None) => return None,
    };
    let text = bfc_fragmented(m, request, label)
        .or_else(|| banks_fragmented(m))
        .or_else(|| tpu_fragmented(m, request))
        .or_else(|| pytorch_cache_fragmented(m, request))?;
    let line = Line::new(
        DiagnosisId::Fragmentation,
        label,
        text,
        "free memory split into pieces smaller than the request, by arrays of different lifetimes",
    );
    let (fix, cost) = if m.per_bank_request_bytes.is_some() {
        (
            "allocate the large buffers first and free those that outlive their use (deallocate) before it; if it worked with an earlier version of the compiler, its buffer placement regressed (bisect it)",
            "none at run time",
        )
    } else if m.kind == OomKind::TpuRuntime {
        (
            "free arrays that outlive a step before the large program runs (del x; x.delete()), load large arrays first and small ones after, or restart between phases that leave long-lived arrays scattered; a slightly smaller program (batch) fits the largest free piece",
            "none at run time",
        )
    } else if super::held::pytorch_cached(m).is_some() {
        (
            "let PyTorch's allocator grow segments instead of splitting blocks (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, PYTORCH_HIP_ALLOC_CONF on ROCm), or preallocate tensors that grow step by step (a KV cache extended with torch.cat) at their final size",
            "none at run time",
        )
    } else {
        (
            super::apis::driver_allocator(super::apis::of(m)),
            "cuda_async can be slower to allocate",
        )
    };
    Some(line.fix(fix).cost(cost))
}

fn bfc_fragmented(m: &OomMessage, request: u64, label: Label) -> Option<String> {
    let a = m.allocator.as_ref()?;
    let in_use = a.in_use_bytes?;
    // The `cuda_async` pool prints BFC's fields, but the driver places its blocks: its
    // `LargestFreeBlock` and `Reserved` stay 0, and what it lacks the device lacked.
    if a.is_cuda_async() {
        return None;
    }
    // In a pool under a GiB, the pool's size is the story (`held`), not its pieces.
    if a.limit_bytes.is_some_and(|l| l < held::SMALL_POOL) {
        return None;
    }
    let name = a.display_name();
    // Free inside the regions already taken from the device: no new region is needed,
    // unless the limit left room for one, which the device then refused (`held`).
    if let Some(region) = a
        .region_allocated_bytes
        .filter(|&r| r.saturating_sub(in_use) >= request && !held::could_grow(a, request))
    {
        let largest = a
            .largest_free_block_bytes
            .map(|l| format!(", and its largest free block is {}", size(l)))
            .unwrap_or_default();
        return Some(format!(
            "{} free inside the {} of regions {name} holds ({} in use, read), more than the {} requested{largest}",
            size(region - in_use),
            size(region),
            size(in_use),
            size(request)
        ));
    }
    let limit = a.limit_bytes?;
    let free = limit.saturating_sub(in_use);
    // With the pool all but full, the program is what fills it, whatever the pieces left.
    let mostly_full = free.saturating_mul(100) < limit.saturating_mul(FRAGMENTED_FREE_PCT);
    if free < request || mostly_full {
        return None;
    }
    let requested = match label {
        Label::Estimated => "requested (estimated from its tensor's shape)",
        _ => "requested",
    };
    match (a.largest_free_block_bytes, a.region_allocated_bytes) {
        (Some(largest), _) => (largest < request).then(|| {
            format!(
                "{} free in {name} ({} limit − {} in use, read), more than the {} {requested}, but its largest free block is {}",
                size(free),
                size(limit),
                size(in_use),
                size(request),
                size(largest)
            )
        }),
        // Neither its regions nor its largest block stated (TensorFlow 1.x's `Stats:`):
        // an allocator holding its whole limit as one region from the start, as
        // TensorFlow's and JAX's preallocating ones do, fails a request below its free
        // total only for want of one piece that large.
        (None, None) => Some(format!(
            "{} free in {name} ({} limit − {} in use, read), more than the {} {requested}, yet the request failed: no free piece was that large",
            size(free),
            size(limit),
            size(in_use),
            size(request)
        )),
        (None, _) => None,
    }
}

/// The share of a pool (percent) that must be free for a failed request below the free
/// total (`Limit − InUse`) to be put down to fragmentation: below it, the program fills
/// the pool.
const FRAGMENTED_FREE_PCT: u64 = 10;

/// A banked memory (Tenstorrent's DRAM or L1): the free bytes and the largest free block
/// it prints are each bank's, so the request to compare is each bank's share.
fn banks_fragmented(m: &OomMessage) -> Option<String> {
    let need = m.per_bank_request_bytes?;
    let (free, largest) = (m.free_bytes?, m.reservable_bytes?);
    (largest < need && need <= free).then(|| {
        format!(
            "{} free in each bank (read), more than the {} each bank needs, but the largest free block is {}: the free memory is in pieces",
            size(free),
            size(need),
            size(largest)
        )
    })
}

/// PyTorch's caching allocator holds memory reserved but unallocated, a twentieth of the
/// device or more and above the request, while the request fails: before failing it
/// reuses any cached block that large and returns wholly free segments to the device,
/// so what stays is free space in pieces inside segments partly in use. Below a
/// twentieth, the tensors PyTorch allocated are what fill the device, whatever the
/// pieces.
fn pytorch_cache_fragmented(m: &OomMessage, request: u64) -> Option<String> {
    let cached = super::held::pytorch_cached(m)?;
    let capacity = crate::diagnosis::oom::capacity(m)?;
    let free = m.free_bytes.unwrap_or(0);
    let large = cached.saturating_mul(100) >= capacity.saturating_mul(CACHED_FREE_PCT);
    // The older wording states the cache whole; what of it is free is then derived.
    let how = match m.pytorch_reserved_unallocated_bytes {
        Some(_) => "read",
        None => "estimated: reserved in total less allocated",
    };
    (large && cached >= request && free < request).then(|| {
        format!(
            "{} reserved by PyTorch but unallocated ({how}), {}% of the {} device and more than the {} requested, yet no cached block was that large: the cache is in pieces",
            size(cached),
            cached.saturating_mul(100) / capacity,
            size(capacity),
            size(request)
        )
    })
}

/// The share of the device (percent) PyTorch's cache must hold unallocated for a failed
/// request below it to be put down to fragmentation.
const CACHED_FREE_PCT: u64 = 5;

fn tpu_fragmented(m: &OomMessage, request: u64) -> Option<String> {
    let (free, reservable) = (m.free_bytes?, m.reservable_bytes?);
    // The runtime's own answer to whether compacting would help, when it gives one.
    let compaction_helps = m.compacted_reservable_bytes.is_none_or(|c| c >= request);
    (reservable < request && request <= free && compaction_helps).then(|| {
        format!(
            "{} free (read), more than the {} requested, but only {} can be reserved in one piece: the free memory is in pieces",
            size(free),
            size(request),
            size(reservable)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::message::AllocatorStats;

    fn bfc(limit: u64, in_use: u64) -> OomMessage {
        OomMessage {
            kind: OomKind::BfcRuntime,
            allocator: Some(AllocatorStats {
                limit_bytes: Some(limit),
                in_use_bytes: Some(in_use),
                ..AllocatorStats::default()
            }),
            ..OomMessage::default()
        }
    }

    #[test]
    fn a_pool_failing_below_its_free_total_is_fragmented_unless_full_or_small() {
        const GIB: u64 = 1 << 30;
        // Half free, stating neither regions nor its largest block: in pieces.
        let text = bfc_fragmented(&bfc(16 * GIB, 8 * GIB), 6 * GIB, Label::Read);
        assert!(text.is_some_and(|t| t.contains("no free piece was that large")));
        // The request over the free total is not fragmentation.
        assert_eq!(
            bfc_fragmented(&bfc(16 * GIB, 8 * GIB), 9 * GIB, Label::Read),
            None
        );
        // 99% full: the program fills the pool.
        assert_eq!(
            bfc_fragmented(&bfc(100 * GIB, 99 * GIB), GIB / 2, Label::Read),
            None
        );
        // A pool under a GiB: its size is the story.
        assert_eq!(
            bfc_fragmented(&bfc(GIB / 2, GIB / 4), GIB / 8, Label::Read),
            None
        );
        // A request known from its shape says so.
        let text = bfc_fragmented(&bfc(16 * GIB, 8 * GIB), 6 * GIB, Label::Estimated);
        assert!(text.is_some_and(|t| t.contains("estimated from its tensor's shape")));
    }
}
