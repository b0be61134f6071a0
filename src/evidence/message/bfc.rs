//! The BFC allocator's log (TensorFlow's, then XLA's `tsl/framework/bfc_allocator.cc`):
//! `Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.41GiB (rounded to
//! 3664773120)requested by op …`, or the warning `… with freed_by_count=0. The caller
//! indicates that this is not a failure …`; then, when dumped, the bins (`Bin (256):
//! Total Chunks: …`), the chunk map (`InUse at …`, `Free at …`), `Sum Total of in-use
//! chunks: …` and the `Stats:` block (`Limit:`, `InUse:`, `MaxInUse:`, …).

use super::clean;
use super::draft::{set, Block, Draft, Family};
use super::fields::{after, bounded, count_after, word};
use super::model::{AllocatorStats, ChunkClass, OomKind, PoolPicture, MAX_CHUNK_CLASSES};
use super::units;

/// Lines that belong to a BFC dump, for the scanner's record-start test.
const KEYS: [&str; 16] = [
    "Current allocation summary follows",
    "If the cause is memory fragmentation",
    "BFCAllocator dump for",
    "Bin (",
    "Summary of in-use Chunks",
    "Sum Total of in-use chunks",
    "Total bytes in pool",
    "Total size in pool",
    "total_region_allocated_bytes_",
    "Next region of size",
    "Stats:",
    "Limit:",
    "InUse:",
    "MaxInUse:",
    "NumAllocs:",
    "MaxAllocSize:",
];

pub fn is_key_line(body: &str) -> bool {
    KEYS.iter().any(|k| body.starts_with(k)) || is_chunk_line(body)
}

/// `Allocator (GPU_0_bfc) ran out of memory trying to allocate …` (older TensorFlow:
/// `Ran out of memory trying to allocate 32.00MiB.  See logs for memory state.`; some
/// versions misspell it `tying`).
pub fn headline(body: &str) -> Option<Draft> {
    let rest = [
        "an out of memory trying to allocate ",
        "an out of memory tying to allocate ",
    ]
    .iter()
    .find_map(|k| after(body, k))?;
    let warning = body.contains("freed_by_count") || body.contains("not a failure");
    let mut draft = Draft::new(OomKind::BfcRuntime, !warning);
    let m = &mut draft.msg;
    m.requested_bytes = units::size_exact_prefix(rest, false).map(|s| s.0);
    m.requested_op = after(body, "requested by op ").and_then(word);
    // `3.41GiB (rounded to 3664773120)`: the allocator's size, kept apart until the scan
    // knows whether XLA states the request exactly too.
    let mut rounded = rest
        .contains("(rounded to")
        .then_some(m.requested_bytes)
        .flatten();
    // Intel's extension for TensorFlow prints both in bytes (`10529419660 Bytes (rounded
    // to 10529419776 Bytes)`): the first is the request itself.
    if let Some(exact) = byte_count(rest).filter(|_| rounded.is_some()) {
        rounded = m.requested_bytes;
        m.requested_bytes = Some(exact);
    }
    if let Some(name) = allocator_name(body) {
        // TensorFlow's pinned host allocators (`cuda_host_bfc`, `gpu_host_bfc`).
        if name.contains("host") {
            m.memory_space = Some("host".into());
        }
        m.allocator = Some(AllocatorStats::named(name));
    }
    if rounded.is_some() {
        let allocator = m.allocator.get_or_insert_with(AllocatorStats::default);
        allocator.rounded_request_bytes = rounded;
    }
    Some(draft)
}

/// A count of bytes spelled out at the start of `text` (`10529419660 Bytes`).
fn byte_count(text: &str) -> Option<u64> {
    let mut words = text.split_whitespace();
    let count = units::integer(words.next()?)?;
    words
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("bytes"))
        .then_some(count)
}

/// `NAME` in `Allocator (NAME)`.
fn allocator_name(body: &str) -> Option<String> {
    let name = after(body, "llocator (")?.split(')').next()?;
    (!name.is_empty() && !name.contains(' ')).then(|| bounded(name))
}

/// Whether a line without a headline starts a BFC dump (a paste that begins there).
pub fn opens(body: &str) -> bool {
    body.starts_with("BFCAllocator dump for")
        || is_bin_line(body)
        || is_chunk_line(body)
        || body.starts_with("Sum Total of in-use chunks")
        || is_pool_line(body)
}

/// Whether a line without a message starts a `Stats:` block: the allocator's state,
/// kept for the failure that follows it (TensorFlow prints the dump before the `OOM when
/// allocating tensor` line), never a message on its own.
pub fn opens_stats(body: &str) -> bool {
    body.starts_with("Stats:") || is_stats_field(body)
}

/// Opens a `Stats:` block in `draft` with `body`, its header or (a paste cut above the
/// header) its first field. Returns whether it took the line.
pub fn open_stats(draft: &mut Draft, body: &str) -> bool {
    if body.starts_with("Stats:") {
        return block_line(draft, body);
    }
    draft.enter(Block::BfcStats) && stats_field(draft, body)
}

/// The `Stats:` block of another pool printing BFC's fields (the `cuda_async`
/// allocator's, after its driver failure), its first field on the header's line
/// (`Stats: Limit:   22892838912`). Returns whether it took the line.
pub fn open_stats_of_pool(draft: &mut Draft, body: &str) -> bool {
    let Some(rest) = body.strip_prefix("Stats:") else {
        return false;
    };
    if !draft.enter(Block::BfcStats) {
        return false;
    }
    let rest = rest.trim();
    if !rest.is_empty() {
        stats_field(draft, rest);
    }
    true
}

/// `InUse:  2978664704`: a field of the `Stats:` block, its value a bare count.
fn is_stats_field(body: &str) -> bool {
    const KEYS: [&str; 8] = [
        "Limit",
        "InUse",
        "MaxInUse",
        "NumAllocs",
        "MaxAllocSize",
        "Reserved",
        "PeakReserved",
        "LargestFreeBlock",
    ];
    body.split_once(':')
        .is_some_and(|(key, value)| KEYS.contains(&key) && units::integer(value.trim()).is_some())
}

/// `total_region_allocated_bytes_: 4928097280 memory_limit_: 4928097484 available bytes:
/// 204 curr_region_allocation_bytes_: 9856195072` (newer: `Total size in pool: 89.77GiB
/// memory_limit_: 89.77GiB available size: 153B …`).
fn is_pool_line(body: &str) -> bool {
    body.contains("memory_limit_:")
}

fn is_bin_line(body: &str) -> bool {
    body.starts_with("Bin (") && body.contains("Total Chunks")
}

/// `InUse at 7fa140385100 of size 47710208 next 878`, `Free  at …`, `Chunk at …`.
fn is_chunk_line(body: &str) -> bool {
    let mut words = body.split_whitespace();
    let first = words.next();
    matches!(first, Some("InUse" | "Free" | "Chunk"))
        && words.next() == Some("at")
        && body.contains(" of size ")
}

/// Reads a line of a BFC dump into `draft`. Returns whether the line was one.
pub fn block_line(draft: &mut Draft, body: &str) -> bool {
    if clean::is_fragmentation_picture(body) {
        let ours = draft.msg.kind == OomKind::BfcRuntime;
        if ours {
            picture_row(draft, body);
        }
        return ours;
    }
    if body.starts_with("If the cause is memory fragmentation") {
        return draft.msg.kind == OomKind::BfcRuntime;
    }
    if let Some(taken) = dump_line(draft, body) {
        return taken;
    }
    if body.starts_with("Stats:") {
        let opened = draft.msg.kind == OomKind::BfcRuntime && draft.enter(Block::BfcStats);
        draft.dump_open &= !opened;
        return opened;
    }
    draft.block == Block::BfcStats && stats_field(draft, body)
}

/// The allocator draws its pool in one row of 100 characters.
const PICTURE_WIDTH: u32 = 100;

/// A row of the pool's picture: the picture itself, or the rest of one a terminal
/// wrapped. A second whole picture in the same message adds nothing; nor does a picture
/// with no allocator's headline to belong to.
fn picture_row(draft: &mut Draft, row: &str) {
    let row = PoolPicture::of_row(row);
    let Some(allocator) = draft.msg.allocator.as_mut() else {
        return;
    };
    allocator.picture = match allocator.picture {
        Some(p) if p.drawn() < PICTURE_WIDTH => Some(PoolPicture {
            in_use: p.in_use.saturating_add(row.in_use),
            free: p.free.saturating_add(row.free),
        }),
        Some(p) => Some(p),
        None => Some(row),
    };
}

/// The dump before `Stats:`. `None` when the line is not a dump line.
fn dump_line(draft: &mut Draft, body: &str) -> Option<bool> {
    let dump = body.starts_with("Current allocation summary follows")
        || body.starts_with("BFCAllocator dump for")
        || is_bin_line(body)
        || is_chunk_line(body);
    let summary = body.starts_with("Summary of in-use Chunks") || body.contains(" Chunks of size ");
    let sum = body.starts_with("Sum Total of in-use chunks");
    let pool = is_pool_line(body);
    // `Bin for 28.61GiB was 256.00MiB, Chunk State:`: the request, rounded, when the
    // dump comes without its headline; `Next region of size N`: one region of the pool.
    let bin_for = after(body, "Bin for ").filter(|r| r.contains(" was "));
    let region = count_after(body, "Next region of size ");
    if !(dump || summary || sum || pool || bin_for.is_some() || region.is_some()) {
        return None;
    }
    if !draft.adopt(Family::Bfc) || draft.seen.contains(&Block::BfcStats) {
        return Some(false);
    }
    draft.block = Block::BfcDump;
    draft.dump_open |= dump;
    let stats = draft
        .msg
        .allocator
        .get_or_insert_with(AllocatorStats::default);
    if let Some(name) = after(body, "BFCAllocator dump for ").and_then(word) {
        if stats.name.is_empty() {
            stats.name = name;
        }
    }
    if sum {
        set(&mut draft.sum_total, after(body, ":").and_then(size));
    }
    if let Some(class) = chunk_class(body) {
        keep_largest(&mut stats.largest_in_use, class);
    }
    if pool {
        let count = |key: &str| count_after(body, key);
        set(&mut stats.limit_bytes, count("memory_limit_:"));
        set(
            &mut stats.region_allocated_bytes,
            count("total_region_allocated_bytes_:")
                .or_else(|| count("Total size in pool:"))
                .or_else(|| count("Total bytes in pool:")),
        );
        set(
            &mut stats.available_bytes,
            count("available bytes:").or_else(|| count("available size:")),
        );
        set(
            &mut stats.next_region_bytes,
            count("curr_region_allocation_bytes_:"),
        );
    }
    if let Some(region) = region {
        draft.regions = draft.regions.saturating_add(region);
    }
    if let Some(rest) = bin_for {
        set(&mut draft.msg.requested_bytes, size(rest));
    }
    Some(true)
}

/// `2 Chunks of size 13200000000 totalling 24.59GiB`: one size class of the in-use
/// summary.
fn chunk_class(body: &str) -> Option<ChunkClass> {
    let (count, rest) = body.split_once(" Chunks of size ")?;
    let count = count.trim().rsplit(' ').next()?.parse().ok()?;
    let size_bytes = rest.split_whitespace().next()?.parse().ok()?;
    Some(ChunkClass { size_bytes, count })
}

/// Keeps the [`MAX_CHUNK_CLASSES`] largest size classes, largest first.
fn keep_largest(classes: &mut Vec<ChunkClass>, class: ChunkClass) {
    let at = classes.partition_point(|c| c.size_bytes >= class.size_bytes);
    if at < MAX_CHUNK_CLASSES {
        classes.insert(at, class);
        classes.truncate(MAX_CHUNK_CLASSES);
    }
}

/// One line of the `Stats:` block (`Limit:        9955036364`).
fn stats_field(draft: &mut Draft, body: &str) -> bool {
    let Some((key, value)) = body.split_once(':') else {
        return false;
    };
    let bytes = units::size_exact_prefix(value, true).map(|s| s.0);
    let stats = draft
        .msg
        .allocator
        .get_or_insert_with(AllocatorStats::default);
    let slot = match key.trim() {
        "Limit" => &mut stats.limit_bytes,
        "InUse" => &mut stats.in_use_bytes,
        "MaxInUse" => &mut stats.max_in_use_bytes,
        "NumAllocs" => &mut stats.num_allocs,
        "MaxAllocSize" => &mut stats.max_alloc_size_bytes,
        "Reserved" => &mut stats.reserved_bytes,
        "PeakReserved" => &mut stats.peak_reserved_bytes,
        "LargestFreeBlock" => &mut stats.largest_free_block_bytes,
        _ => return false,
    };
    set(slot, bytes);
    if key.trim() == "Limit" {
        set(&mut draft.msg.capacity_bytes, bytes);
    }
    true
}

fn size(text: &str) -> Option<u64> {
    units::size_exact_prefix(text, false).map(|s| s.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_headline() {
        let d = headline("Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.41GiB (rounded to 3664773120)requested by op Mul").unwrap();
        assert!(d.failure);
        assert_eq!(d.msg.requested_bytes, Some(3_664_773_120));
        assert_eq!(d.msg.requested_op.as_deref(), Some("Mul"));
        assert_eq!(d.msg.allocator.map(|a| a.name), Some("GPU_0_bfc".into()));
        let w = headline("Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.20GiB with freed_by_count=0. The caller indicates that this is not a failure").unwrap();
        assert!(!w.failure);
        assert_eq!(w.msg.requested_op, None);
    }

    #[test]
    fn recognises_dump_lines() {
        assert!(is_chunk_line(
            "Free  at 7fa143105100 of size 23593216 next 812"
        ));
        assert!(is_chunk_line(
            "InUse at 00000007A03B6600 next 2609 of size 256"
        ));
        assert!(!is_chunk_line("InUse: 4319733760"));
        assert!(is_bin_line(
            "Bin (256): \tTotal Chunks: 64, Chunks in use: 64."
        ));
    }
}
