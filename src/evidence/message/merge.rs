//! Choosing among the messages of one text, and joining them: how much a message
//! states ([`detail`], the scan keeps the one stating most), and what the chosen failure
//! takes from others printed about the same request ([`borrow`]): XLA's exact count
//! beside the allocator's rounded one or a size printed in GiB, the allocator's state,
//! the operation, shape, device and error code; and the figures a message states in other
//! words ([`derive_totals`]), or a BFC `Stats:` block alone as its failure
//! ([`stats_alone`]).

use super::draft::set;
use super::model::{AllocatorStats, OomKind, OomMessage};

/// Fills what `msg` lacks from `other` when both speak of the same request.
pub(super) fn borrow(msg: &mut OomMessage, other: &OomMessage) {
    // XLA's `122.10GiB` beside the driver's `131108848800 bytes`: the count is exact.
    let exact_count = match (msg.requested_bytes, other.requested_bytes) {
        (Some(a), Some(b)) if printed_rounded(a, b) => Some(b),
        _ => None,
    };
    let same_request = match (msg.requested_bytes, other.requested_bytes) {
        (Some(a), Some(b)) => {
            a == b
                || rounds_to(b, rounded(msg))
                || rounds_to(a, rounded(other))
                || exact_count.is_some()
                // `38.18GiB` after BFC's `(rounded to 40996238592)`: ours is the exact one.
                || printed_rounded(b, a)
        }
        _ => true,
    };
    if !same_request {
        return;
    }
    if exact_count.is_some() {
        msg.requested_bytes = exact_count;
    }
    // TensorFlow's tensor, sized from its shape, is the allocator's request of that size
    // (`OOM when allocating tensor with shape[4,32,2048,2048]` after BFC's `trying to
    // allocate 2.00GiB (rounded to 2147483648)`).
    // With no type printed (TensorFlow 1.x's `OOM when allocating tensor with
    // shape[3,3,512,512]`), the shape sizes it up to its element's size: a request of
    // its elements times 1, 2, 4, 8 or 16 bytes is its own.
    if msg.requested_bytes.is_none() {
        let from_shape = msg.requested_bytes_from_shape;
        let elements = msg
            .requested_shape
            .as_deref()
            .filter(|_| from_shape.is_none())
            .and_then(super::short::elements_of);
        // The allocator's size, exact, rounded up to its granularity, or printed with two
        // decimals (`118.28MiB` for a tensor of 124,026,880 bytes).
        let sized = |r: u64, s: u64| r == s || rounds_to(s, Some(r)) || printed_rounded(r, s);
        let of_shape = |r: u64| {
            from_shape.is_some_and(|s| sized(r, s))
                || elements.is_some_and(|n| {
                    [1, 2, 4, 8, 16]
                        .iter()
                        .any(|&k| sized(r, n.saturating_mul(k)))
                })
        };
        if let Some(r) = other.requested_bytes.filter(|&r| of_shape(r)) {
            msg.requested_bytes = Some(r);
        }
    }
    // XLA's exact count beats the allocator's rounded one.
    if let Some(exact) = other
        .requested_bytes
        .filter(|&e| rounds_to(e, rounded(msg)))
    {
        msg.requested_bytes = Some(exact);
    }
    // A driver's status is its own failure's, not a code for the message that borrows.
    if other.kind != OomKind::Driver {
        set(&mut msg.error_code, other.error_code.clone());
    }
    set(&mut msg.memory_space, other.memory_space.clone());
    set(&mut msg.requested_op, other.requested_op.clone());
    set(&mut msg.requested_shape, other.requested_shape.clone());
    set(&mut msg.requested_dtype, other.requested_dtype.clone());
    set(
        &mut msg.requested_bytes_from_shape,
        other.requested_bytes_from_shape,
    );
    set(&mut msg.device_ordinal, other.device_ordinal);
    set(&mut msg.program, other.program.clone());
    // A dump pasted before the allocator's headline: the headline's request is the
    // dump's, when both name one allocator.
    let same_allocator = msg.kind == OomKind::BfcRuntime
        && other.kind == OomKind::BfcRuntime
        && match (&msg.allocator, &other.allocator) {
            (Some(a), Some(b)) => a.name.is_empty() || b.name.is_empty() || a.name == b.name,
            _ => true,
        };
    if same_allocator {
        set(&mut msg.requested_bytes, other.requested_bytes);
    }
    if let Some(theirs) = &other.allocator {
        let ours = msg.allocator.get_or_insert_with(AllocatorStats::default);
        borrow_allocator(ours, theirs);
    }
}

/// The request as the BFC allocator rounded it (`(rounded to N)`), if it said so.
fn rounded(m: &OomMessage) -> Option<u64> {
    m.allocator.as_ref()?.rounded_request_bytes
}

/// Whether `rounded` is what a size printed rounded (`122.10GiB`, `141.1KiB`) reads as, and
/// `exact`, another count, prints the same: the same request, `exact` the better figure.
fn printed_rounded(rounded: u64, exact: u64) -> bool {
    if rounded == exact {
        return false;
    }
    // The allocator prints KiB with one decimal (`141.1KiB`), larger units with two.
    let units = [
        (1u64 << 40, 100.0),
        (1 << 30, 100.0),
        (1 << 20, 100.0),
        (1 << 10, 10.0),
    ];
    let Some((unit, scale)) = units.into_iter().find(|&(u, _)| rounded >= u) else {
        return false;
    };
    let digits = |n: u64| (n as f64 / unit as f64 * scale).round();
    let printed = digits(rounded);
    (printed / scale * unit as f64).round() as u64 == rounded && digits(exact) == printed
}

/// Whether the BFC allocator's `rounded` is `exact` rounded up to its 256-byte
/// granularity (and not `exact` itself, which says nothing new).
fn rounds_to(exact: u64, rounded: Option<u64>) -> bool {
    rounded.is_some_and(|r| r > exact && r - exact < 256)
}

pub(super) fn borrow_allocator(ours: &mut AllocatorStats, theirs: &AllocatorStats) {
    if ours.name.is_empty() {
        ours.name = theirs.name.clone();
    }
    set(&mut ours.limit_bytes, theirs.limit_bytes);
    set(&mut ours.in_use_bytes, theirs.in_use_bytes);
    set(&mut ours.max_in_use_bytes, theirs.max_in_use_bytes);
    set(&mut ours.num_allocs, theirs.num_allocs);
    set(&mut ours.max_alloc_size_bytes, theirs.max_alloc_size_bytes);
    set(&mut ours.reserved_bytes, theirs.reserved_bytes);
    set(&mut ours.peak_reserved_bytes, theirs.peak_reserved_bytes);
    set(
        &mut ours.largest_free_block_bytes,
        theirs.largest_free_block_bytes,
    );
    set(
        &mut ours.region_allocated_bytes,
        theirs.region_allocated_bytes,
    );
    set(&mut ours.available_bytes, theirs.available_bytes);
    set(&mut ours.next_region_bytes, theirs.next_region_bytes);
    set(
        &mut ours.mempool_reserved_bytes,
        theirs.mempool_reserved_bytes,
    );
    set(
        &mut ours.mempool_reserved_high_bytes,
        theirs.mempool_reserved_high_bytes,
    );
    set(&mut ours.mempool_used_bytes, theirs.mempool_used_bytes);
    set(
        &mut ours.mempool_used_high_bytes,
        theirs.mempool_used_high_bytes,
    );
    set(
        &mut ours.rounded_request_bytes,
        theirs.rounded_request_bytes,
    );
    if ours.picture.is_none() {
        ours.picture = theirs.picture;
    }
    if ours.largest_in_use.is_empty() {
        ours.largest_in_use = theirs.largest_in_use.clone();
    }
}

/// How much a message states: its figures, named details, listed allocations and
/// allocator fields.
pub(super) fn detail(m: &OomMessage) -> usize {
    let figures = [
        m.requested_bytes,
        m.used_bytes,
        m.capacity_bytes,
        m.exceeded_by_bytes,
        m.free_bytes,
        m.total_bytes,
        m.tensorcore_bytes,
        m.sparsecore_bytes,
        m.reserved_bytes,
        m.program_bytes,
        m.arguments_bytes,
        m.output_bytes,
        m.constant_bytes,
        m.temp_bytes,
        m.padding_bytes,
        m.fragmentation_bytes,
        m.temp_fragmentation_bytes,
        m.reservable_bytes,
        m.compacted_reservable_bytes,
        m.requested_bytes_from_shape,
        m.aliased_bytes,
        m.pytorch_allocated_bytes,
        m.pytorch_reserved_unallocated_bytes,
        m.pytorch_reserved_bytes,
        m.process_used_bytes,
        m.per_bank_request_bytes,
        m.bank_bytes,
        m.obstacle_offset_bytes,
        m.obstacle_bytes,
    ];
    // A driver's status (`CUDA_ERROR_OUT_OF_MEMORY`) restates its failure: no detail.
    let code = m.error_code.as_ref().filter(|_| m.kind != OomKind::Driver);
    let named = [
        &code.cloned(),
        &m.memory_space,
        &m.requested_op,
        &m.requested_shape,
    ];
    let allocator = m.allocator.as_ref().map_or(0, |a| {
        let figures = [
            a.limit_bytes,
            a.in_use_bytes,
            a.max_in_use_bytes,
            a.largest_free_block_bytes,
            a.region_allocated_bytes,
        ];
        1 + figures.iter().flatten().count()
    });
    let remat = m.remat.as_ref().map_or(0, |r| {
        usize::from(r.limit_bytes.is_some())
            + [r.reduced_to_bytes, r.original_bytes]
                .iter()
                .flatten()
                .count()
    });
    figures.iter().flatten().count()
        + named.iter().filter(|n| n.is_some()).count()
        + m.device_ordinal.map_or(0, |_| 1)
        + m.allocations.len()
        + allocator
        + remat
}

/// The BFC allocator prints its `Stats:` block only when it runs out: pasted alone (its
/// `Limit` and `InUse` at least), it is that failure's state with the request cut away.
pub(super) fn stats_alone(allocator: AllocatorStats) -> Option<OomMessage> {
    (allocator.in_use_bytes.is_some() && allocator.limit_bytes.is_some()).then(|| OomMessage {
        kind: OomKind::BfcRuntime,
        allocator: Some(allocator),
        truncated: true,
        ..OomMessage::default()
    })
}

/// The figures a message states in other words, filled in where it states them so:
/// TensorCore plus SparseCore is what the program needs, and its excess over the
/// memory; a BFC allocator's `InUse` and `Limit` are what is used and the capacity, and
/// its name (`GPU_0_bfc`) the device it allocates on.
pub(super) fn derive_totals(m: &mut OomMessage) {
    let ordinal = m.allocator.as_ref().and_then(|a| allocator_device(&a.name));
    set(&mut m.device_ordinal, ordinal);
    if let (Some(tc), Some(sc)) = (m.tensorcore_bytes, m.sparsecore_bytes) {
        let used = tc.saturating_add(sc);
        set(&mut m.used_bytes, Some(used));
        if let Some(cap) = m.capacity_bytes.filter(|&c| used > c) {
            set(&mut m.exceeded_by_bytes, Some(used - cap));
        }
    }
    let allocator = m
        .allocator
        .as_ref()
        .map(|a| (a.in_use_bytes, a.limit_bytes));
    if let Some((in_use, limit)) = allocator {
        set(&mut m.capacity_bytes, limit);
        // A buffer assignment's `total allocation` is the program's own need, not what
        // the allocator had in use.
        if m.kind != OomKind::GpuBufferAssignment {
            set(&mut m.used_bytes, in_use);
        }
    }
    if m.allocator
        .as_ref()
        .is_some_and(|a| a == &AllocatorStats::default())
    {
        m.allocator = None;
    }
}

/// The device a BFC allocator serves, from its name: TensorFlow and XLA name one per
/// GPU as `GPU_<ordinal>_bfc`.
fn allocator_device(name: &str) -> Option<u32> {
    name.strip_prefix("GPU_")?
        .strip_suffix("_bfc")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bfc_allocator_names_its_device() {
        assert_eq!(allocator_device("GPU_0_bfc"), Some(0));
        assert_eq!(allocator_device("GPU_3_bfc"), Some(3));
        assert_eq!(allocator_device("GPU_host_bfc"), None);
        assert_eq!(allocator_device("cuda_host_bfc"), None);
    }

    #[test]
    fn a_size_printed_in_gib_is_the_same_as_a_count_that_prints_so() {
        assert!(printed_rounded(131_103_876_710, 131_108_848_800));
        assert!(!printed_rounded(131_108_848_800, 131_103_876_710));
        assert!(!printed_rounded(131_103_876_710, 141_103_876_710));
        // `141.1KiB` (one decimal below a MiB) beside XLA's `144480 bytes`.
        assert!(printed_rounded(144_486, 144_480));
        assert!(!printed_rounded(144_486, 144_600));
    }
}
