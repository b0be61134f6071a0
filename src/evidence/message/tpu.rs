//! XLA:TPU's messages: the compile-time check (`Ran out of memory in memory space hbm.
//! Used X of Y hbm. Exceeded hbm capacity by Z.`, error E1000) with its `Total hbm usage`,
//! `Program hbm requirement` and `Largest program allocations` blocks; the TensorCore /
//! SparseCore split; the early abort; and the runtime's failures to place a buffer or a
//! program (`Attempting to allocate X. That was not possible. There are Y free.`).

use super::draft::{set, Block, Draft, Family};
use super::fields::{after, bounded, count_after, field, size_after, word};
use super::listing;
use super::model::OomKind;
use super::short;
use super::units;

/// Lines that start a TPU block or a block's field, for the scanner's record-start test.
const KEYS: [&str; 15] = [
    "Total ",
    "Post Compilation Analysis:",
    "Program ",
    "Largest program allocations",
    "Output size",
    "HBM capacity",
    "Top-of-Memory reserved:",
    "Currently allocated:",
    "Available after request:",
    "Persistent allocations",
    "Heap allocator status:",
    "HLO temp",
    "reserved",
    "arguments",
    "program",
];

/// Whether `body` holds a TPU wording that carries none of the generic triggers
/// (`short::has_trigger`).
pub fn has_trigger(body: &str) -> bool {
    is_bare_usage(body) || is_temporaries_check(body)
}

pub fn is_key_line(body: &str) -> bool {
    KEYS.iter().any(|k| body.starts_with(k))
}

/// A TPU headline: the compile-time check, the TensorCore/SparseCore split, the early
/// abort or a runtime failure.
pub fn headline(body: &str) -> Option<Draft> {
    let (kind, fill): (OomKind, fn(&mut Draft, &str)) =
        if body.contains("Ran out of memory in memory space") || is_bare_usage(body) {
            (OomKind::TpuCompileHbm, compile_check)
        } else if is_temporaries_check(body) {
            (OomKind::TpuCompileHbm, temporaries_check)
        } else if body.contains("TensorCore Hbm usage") {
            (OomKind::TpuTcSc, tensorcore_sparsecore)
        } else if body.contains("Aborting compilation early")
            || body.contains("enough memory. Requires")
        {
            (OomKind::TpuEarlyAbort, early_abort)
        } else if is_runtime_failure(body) {
            (OomKind::TpuRuntime, runtime_failure)
        } else {
            return None;
        };
    let mut draft = Draft::new(kind, true);
    draft.msg.error_code = short::error_code(body);
    fill(&mut draft, body);
    Some(draft)
}

/// The compile-time check's usage sentence quoted without its headline (`Used 98.33G of
/// 30.75G hbm. Exceeded hbm capacity by 67.59G`, as run notes copy it).
/// `Used ` must come first: a line a log wrapped after `Used 59.41G of` goes on with
/// `31.25G hbm. Exceeded hbm capacity …`, the tail of the headline before it.
fn is_bare_usage(body: &str) -> bool {
    after(body, "Used ").is_some_and(|rest| rest.contains(BARE_USAGE))
}

/// What [`is_bare_usage`] looks for: the end of `Used X of Y hbm.` and the start of the
/// sentence after it, which only this message puts side by side.
const BARE_USAGE: &str = "hbm. Exceeded hbm capacity";

/// Newer XLA:TPU words its compile-time check by the program's temporaries: `Ran out of
/// memory on HBM, the total memory required for HLO temporaries (38.28G) exceeds
/// available HBM (31.24G).`
fn is_temporaries_check(body: &str) -> bool {
    body.contains(TEMPORARIES_HEADLINE) || body.contains(TEMPORARIES_LIMIT)
}

/// The two halves of that message, either of which may be alone on a line a log wrapped.
const TEMPORARIES_HEADLINE: &str = "Ran out of memory on HBM";
const TEMPORARIES_LIMIT: &str = "exceeds available HBM (";

/// `… HLO temporaries (38.28G) exceeds available HBM (31.24G).`: what the program needs
/// is the size in the last parentheses before the limit.
fn temporaries_check(draft: &mut Draft, body: &str) {
    let m = &mut draft.msg;
    m.memory_space = Some("hbm".into());
    if let Some(at) = body.find(TEMPORARIES_LIMIT) {
        let need = body
            .get(..at)
            .and_then(|head| head.rfind('(').map(|p| (head, p)));
        m.used_bytes = need.and_then(|(head, p)| size_after(head.get(p..)?, "("));
        m.capacity_bytes = size_after(body, TEMPORARIES_LIMIT);
    }
}

/// `Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm. Exceeded hbm
/// capacity by 17.34G.`
fn compile_check(draft: &mut Draft, body: &str) {
    let m = &mut draft.msg;
    m.memory_space = after(body, "in memory space ")
        .or_else(|| after(body, "Exceeded "))
        .and_then(word)
        .map(|w| w.trim_end_matches(['.', ',', ':']).to_string());
    if let Some(used) = after(body, "Used ") {
        if let Some((bytes, len)) = units::size_exact_prefix(used, false) {
            m.used_bytes = Some(bytes);
            m.capacity_bytes = used.get(len..).and_then(|r| size_after(r, " of "));
        }
    } else if let Some(estimate) = after(body, "Estimated ") {
        // A kernel's estimate of its own scoped memory, as Helion's Pallas backend words
        // it: `Estimated 268.96MB exceeds 67.11MB vmem capacity.`
        if let Some((bytes, len)) = units::size_exact_prefix(estimate, false) {
            m.used_bytes = Some(bytes);
            m.capacity_bytes = estimate.get(len..).and_then(|r| size_after(r, "exceeds "));
        }
    }
    m.exceeded_by_bytes = size_after(body, "capacity by ");
}

/// `TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding available
/// bytes: 95.74G`
fn tensorcore_sparsecore(draft: &mut Draft, body: &str) {
    let m = &mut draft.msg;
    m.memory_space = Some("hbm".into());
    m.tensorcore_bytes = size_after(body, "TensorCore Hbm usage:");
    m.sparsecore_bytes = size_after(body, "SparseCore Hbm usage");
    m.capacity_bytes = size_after(body, "exceeding available bytes:");
}

/// `Aborting compilation early because it's unlikely to have enough memory. Requires
/// 3.47E, has 14.49G available.`
fn early_abort(draft: &mut Draft, body: &str) {
    let m = &mut draft.msg;
    m.used_bytes = size_after(body, "Requires ");
    m.capacity_bytes = after(body, "Requires ").and_then(|r| size_after(r, "has "));
}

fn is_runtime_failure(body: &str) -> bool {
    let attempt = body.contains("Attempting to allocate") || body.contains("Attempting to reserve");
    (attempt && body.contains("not possible"))
        || body.contains("would exceed memory")
        || (body.contains("Could not allocate") && body.contains(" allocatable"))
}

/// Whether the runtime failed while loading a compiled program (its code and scratch
/// space are reserved at the bottom of memory) rather than placing an array.
pub fn is_program_load(body: &str) -> bool {
    body.contains("Error loading program")
        || body.contains("ProgramAllocationFailure")
        || body.contains("at the bottom of memory")
}

/// `Attempting to allocate 129.50M. That was not possible. There are 78.17M free.`,
/// `Attempting to reserve 10.51G at the bottom of memory. … There are 8.97G free, …`,
/// `Allocation (size=107374182400) would exceed memory (size=17179869184) :: #allocation7
/// [shape = 'u8[…]{…}', space=hbm, …]`.
fn runtime_failure(draft: &mut Draft, body: &str) {
    let m = &mut draft.msg;
    m.requested_bytes = size_after(body, "Attempting to allocate ")
        .or_else(|| size_after(body, "Attempting to reserve "))
        .or_else(|| count_after(body, "Allocation (size="));
    m.free_bytes = size_after(body, "There are ");
    // `There are 6.78G free, 0B reserved, and 3.33G reservable.`
    if let Some(rest) = after(body, "There are ").and_then(|r| after(r, " free, ")) {
        m.reserved_at_bottom_bytes = units::size_exact_prefix(rest, false)
            .filter(|&(_, len)| rest.get(len..).is_some_and(|r| r.starts_with(" reserved")))
            .map(|s| s.0);
        m.reservable_bytes = size_after(rest, "and ");
    }
    m.capacity_bytes = count_after(body, "would exceed memory (size=");
    // Quoted in the runtime's own words, bare where a note retyped the line (`shape =
    // u8[3758096384]{0}, space=vmem`).
    m.requested_shape = after(body, "shape = '")
        .and_then(|r| r.split('\'').next())
        .or_else(|| after(body, "shape = ").and_then(|r| r.split([',', ' ']).next()))
        .filter(|shape| !shape.is_empty())
        .map(bounded);
    m.memory_space = after(body, "space=")
        .and_then(word)
        .map(|w| w.trim_end_matches([',', ']']).to_string());
    refused_allocation(m, body);
    // `Due to fragmentation, the largest contiguous region of free memory is 30.56M.`
    if m.reservable_bytes.is_none() {
        m.reservable_bytes = size_after(body, "largest contiguous region of free memory is ");
    }
    // `If fragmentation is eliminated, the maximum reservable bytes would be 905.37M, so
    // compaction wouldn't help.`
    m.compacted_reservable_bytes = size_after(body, "maximum reservable bytes would be ");
    // `The nearest obstacle is at 905.37M from the bottom with size 1.25M.`
    if let Some(rest) = after(body, "nearest obstacle is at ") {
        m.obstacle_offset_bytes = units::size_exact_prefix(rest, false).map(|s| s.0);
        m.obstacle_bytes = size_after(rest, " with size ");
    }
    could_not_allocate(m, body);
    if is_program_load(body) {
        m.requested_op = Some(short::PROGRAM_LOAD_OP.into());
    }
    // `; (0x0x0_HBM0)`: the runtime names the memory it failed in.
    if m.memory_space.is_none() && body.contains("_HBM") {
        m.memory_space = Some("hbm".into());
    }
}

/// The buffer `would exceed memory` names, as one listed allocation: `:: #allocation7
/// [shape = 'u8[…]{…}', space=hbm, size = 0x…, tag = 'output of xor_convert_fusion@{}']`.
/// Its tag is the HLO value the buffer holds (or `scoped memory for <kernel>`), which is
/// what tells an oversized output from a kernel's scratch; the runtime prints its size
/// only in `Allocation (size=N)` (the bracket's `size` is a placeholder).
fn refused_allocation(m: &mut super::model::OomMessage, body: &str) {
    let (Some(size), Some(shape)) = (
        count_after(body, "Allocation (size="),
        m.requested_shape.clone(),
    ) else {
        return;
    };
    if !body.contains("would exceed memory") || !m.allocations.is_empty() {
        return;
    }
    let tag = after(body, "tag = '")
        .and_then(|r| r.split('\'').next())
        .map(bounded)
        .unwrap_or_default();
    m.allocations.push(super::model::MessageAllocation {
        size_bytes: size,
        shape,
        xla_label: tag,
        ..Default::default()
    });
}

/// `Could not allocate 10485760 bytes in memory 0x0x0_HBM0; 4374528 bytes allocatable,
/// 14942208 bytes available`: what one piece could hold, and what is free in all.
fn could_not_allocate(m: &mut super::model::OomMessage, body: &str) {
    let Some(rest) = after(body, "Could not allocate ") else {
        return;
    };
    set(
        &mut m.requested_bytes,
        count_after(body, "Could not allocate "),
    );
    let Some(tail) = after(rest, "; ") else {
        return;
    };
    for piece in tail.split(", ") {
        let figure = units::size_exact_prefix(piece, true).map(|s| s.0);
        if piece.contains(" allocatable") {
            set(&mut m.reservable_bytes, figure);
        } else if piece.contains(" available") {
            set(&mut m.free_bytes, figure);
        }
    }
    if body.contains("_HBM") {
        set(&mut m.memory_space, Some("hbm".into()));
    }
}

/// Whether a line without a headline starts a TPU block (a paste that begins there).
pub fn opens(body: &str) -> bool {
    total_usage(body).is_some()
        || total_line_alone(body)
        || program_requirement(body).is_some()
        || body.starts_with("Largest program allocations in ")
        || listing::tpu_entry_start(body).is_some()
        || listing::unnumbered_tpu_entry_start(body).is_some()
}

/// A line of the `Total` block with nothing else on it (`program          97.92G`), so a
/// paste that starts inside the block still opens it.
fn total_line_alone(body: &str) -> bool {
    let Some((label, value)) = body.split_once(char::is_whitespace) else {
        return false;
    };
    let value = value.trim();
    ["program", "arguments", "reserved"].contains(&label)
        && units::size_prefix(value, false).is_some_and(|(_, len)| len == value.len())
}

/// `Total hbm usage >= 41.74G:`: the memory space and the size.
fn total_usage(body: &str) -> Option<(String, Option<u64>)> {
    let rest = body.strip_prefix("Total ")?;
    let (space, size) = rest.split_once(" usage >= ")?;
    (!space.contains(' ')).then(|| {
        (
            space.to_string(),
            units::size_prefix(size, false).map(|s| s.0),
        )
    })
}

/// `Program hbm requirement 41.22G:`: the memory space and the size.
fn program_requirement(body: &str) -> Option<(String, Option<u64>)> {
    let rest = body.strip_prefix("Program ")?;
    let (space, size) = rest.split_once(" requirement ")?;
    (!space.contains(' ')).then(|| {
        (
            space.to_string(),
            units::size_prefix(size, false).map(|s| s.0),
        )
    })
}

/// Reads a line of a TPU block into `draft`. Returns whether the line was one.
pub fn block_line(draft: &mut Draft, body: &str) -> bool {
    if block_start(draft, body) {
        return true;
    }
    match draft.block {
        Block::TpuTotal => total_field(draft, body),
        Block::TpuProgram => program_field(draft, body),
        Block::TpuPersistent => persistent_field(draft, body),
        Block::TpuRuntime => runtime_field(draft, body),
        Block::TpuHeap => body.starts_with("Max free chunk"),
        Block::TpuListing => {
            if listing::starts_sizeless_entry(draft, body) {
                listing::open_entry(draft, 0);
            }
            listing::entry_field(draft, body)
        }
        _ => false,
    }
}

/// A line that opens a TPU block (the current message takes it if it can).
fn block_start(draft: &mut Draft, body: &str) -> bool {
    // A paste that starts inside the `Total` block: only a message with nothing yet.
    let nothing = super::model::OomMessage {
        kind: draft.msg.kind,
        ..Default::default()
    };
    let fresh = draft.msg == nothing;
    if fresh && total_line_alone(body) {
        return open(draft, Block::TpuTotal) && total_field(draft, body);
    }
    if let Some((space, size)) = total_usage(body) {
        return open(draft, Block::TpuTotal) && {
            set(&mut draft.msg.total_bytes, size);
            set(&mut draft.msg.memory_space, Some(space));
            true
        };
    }
    if let Some((space, size)) = program_requirement(body) {
        return open(draft, Block::TpuProgram) && {
            set(&mut draft.msg.program_bytes, size);
            set(&mut draft.msg.memory_space, Some(space));
            true
        };
    }
    if let Some(space) = body.strip_prefix("Largest program allocations in ") {
        return open(draft, Block::TpuListing) && {
            draft.listing_started = true;
            let space = space.trim_end_matches(':').trim();
            set(&mut draft.msg.memory_space, Some(bounded(space)));
            true
        };
    }
    // A headless paste is adopted as a TPU message before its first line is read.
    let tpu_listing = super::draft::family_of(draft.msg.kind) == Some(Family::Tpu);
    let entry = listing::tpu_entry_start(body).or_else(|| {
        tpu_listing
            .then(|| listing::unnumbered_tpu_entry_start(body))
            .flatten()
    });
    if let Some(size) = entry {
        let ours = draft.adopt(Family::Tpu);
        if ours && matches!(draft.block, Block::TpuListing | Block::None) {
            draft.block = Block::TpuListing;
            listing::open_entry(draft, size);
            return true;
        }
        return false;
    }
    other_block_start(draft, body)
}

/// The blocks that only follow a headline: output size, runtime capacity, persistent
/// allocations, heap status.
fn other_block_start(draft: &mut Draft, body: &str) -> bool {
    if let Some(rest) = body.strip_prefix("Output size") {
        return draft.adopt(Family::Tpu) && {
            set(
                &mut draft.msg.output_bytes,
                units::size_prefix(rest, false).map(|s| s.0),
            );
            // `Output size 64.32M (99.9% utilization); shares 64.25M with arguments.`
            set(&mut draft.msg.aliased_bytes, size_after(rest, "; shares "));
            true
        };
    }
    if let Some(rest) = body.strip_prefix("Post Compilation Analysis:") {
        return post_compilation(draft, rest.trim_start());
    }
    if let Some(rest) = body.strip_prefix("HBM capacity") {
        return open(draft, Block::TpuRuntime) && {
            set(
                &mut draft.msg.capacity_bytes,
                units::size_prefix(rest, false).map(|s| s.0),
            );
            true
        };
    }
    if body.starts_with("Persistent allocations") {
        return open(draft, Block::TpuPersistent);
    }
    if body.starts_with("Heap allocator status") {
        return open(draft, Block::TpuHeap);
    }
    false
}

/// PyTorch/XLA's `Post Compilation Analysis:` lines printed after a failure: the
/// graph's inputs, outputs, inputs aliased with outputs, and intermediates (the same
/// message, whatever its kind).
fn post_compilation(draft: &mut Draft, field: &str) -> bool {
    const FIELDS: [&str; 4] = [
        "Graph input size:",
        "Graph output size:",
        "Aliased Input size:",
        "Intermediate tensor size:",
    ];
    let Some(i) = FIELDS.iter().position(|k| field.starts_with(k)) else {
        // The banner and the other lines of the analysis belong to it all the same.
        return true;
    };
    let figure = size_after(field, FIELDS[i]);
    let m = &mut draft.msg;
    let slot = match i {
        0 => &mut m.arguments_bytes,
        1 => &mut m.output_bytes,
        2 => &mut m.aliased_bytes,
        _ => &mut m.temp_bytes,
    };
    set(slot, figure);
    true
}

fn open(draft: &mut Draft, block: Block) -> bool {
    draft.adopt(Family::Tpu) && draft.enter(block)
}

/// `reserved 528.00M`, `program 41.22G`, `arguments unknown size` (the `Total` block).
fn total_field(draft: &mut Draft, body: &str) -> bool {
    let m = &mut draft.msg;
    if body.starts_with("reserved") {
        set(&mut m.reserved_bytes, value_after_label(body));
    } else if body.starts_with("program") {
        set(&mut m.program_bytes, value_after_label(body));
    } else if body.starts_with("arguments") {
        set(&mut m.arguments_bytes, value_after_label(body));
    } else {
        return body.starts_with("heap allocations");
    }
    true
}

/// The size after a block line's label (`reserved(Infeed/Outfeed/Continuations) 529.00M`,
/// `heap allocations (without fragmentation)   6.08G`); `None` for `unknown size`.
fn value_after_label(body: &str) -> Option<u64> {
    let label_end = match body.find('(') {
        Some(open) if body.get(..open).is_some_and(|l| !l.contains(' ')) => body
            .get(open..)
            .and_then(|r| r.find(')'))
            .map_or(body.len(), |c| open + c + 1),
        _ => body.find([' ', '\t']).unwrap_or(body.len()),
    };
    units::size_exact_prefix(body.get(label_end..)?, false).map(|s| s.0)
}

/// `HLO temp 41.19G (24.2% utilization: Unpadded (A) Padded (B), 0.7% fragmentation (F))`
/// and the program block's other lines (`global`, `scoped`, `reserved`, `overlays`).
fn program_field(draft: &mut Draft, body: &str) -> bool {
    let Some(rest) = field(body, "HLO temp") else {
        let m = &mut draft.msg;
        let slot = match body.split_whitespace().next() {
            Some("reserved") => &mut m.program_reserved_bytes,
            Some("global") => &mut m.global_bytes,
            Some("scoped") => &mut m.scoped_bytes,
            Some("overlays") => &mut m.overlays_bytes,
            _ => return false,
        };
        set(slot, value_after_label(body));
        return true;
    };
    let m = &mut draft.msg;
    set(
        &mut m.temp_bytes,
        units::size_prefix(rest, false).map(|s| s.0),
    );
    let unpadded = size_after(rest, "Unpadded (");
    let padded = size_after(rest, "Padded (");
    if let (Some(unpadded), Some(padded)) = (unpadded, padded) {
        set(&mut m.padding_bytes, Some(padded.saturating_sub(unpadded)));
    }
    set(
        &mut m.fragmentation_bytes,
        size_after(rest, "fragmentation ("),
    );
    true
}

/// `arguments 478.07M (89.4% utilization)`, `output 5.06G (…)`.
fn persistent_field(draft: &mut Draft, body: &str) -> bool {
    let m = &mut draft.msg;
    if body.starts_with("arguments") {
        set(&mut m.arguments_bytes, value_after_label(body));
    } else if body.starts_with("output") {
        set(&mut m.output_bytes, value_after_label(body));
    } else {
        return false;
    }
    true
}

/// `Top-of-Memory reserved:  529.00M (554,696,704 bytes)`, `Currently allocated: …`,
/// `Program requirement: …` under `HBM capacity 8.00G:`.
fn runtime_field(draft: &mut Draft, body: &str) -> bool {
    let m = &mut draft.msg;
    if let Some(v) = field(body, "Top-of-Memory reserved:") {
        set(
            &mut m.reserved_bytes,
            units::size_exact_prefix(v, false).map(|s| s.0),
        );
    } else if let Some(v) = field(body, "Currently allocated:") {
        set(
            &mut m.used_bytes,
            units::size_exact_prefix(v, false).map(|s| s.0),
        );
    } else if let Some(v) = field(body, "Program requirement:") {
        set(
            &mut m.program_bytes,
            units::size_exact_prefix(v, false).map(|s| s.0),
        );
    } else {
        let rule = !body.is_empty() && body.bytes().all(|b| b == b'-');
        return rule || body.starts_with("Available after request:") || body.starts_with(';');
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_compile_check() {
        let d = headline("RuntimeError: XLA:TPU compile permanent error. Ran out of memory in memory space vmem. Estimated 268.96MB exceeds 67.11MB vmem capacity.").unwrap();
        assert_eq!(
            (d.msg.used_bytes, d.msg.capacity_bytes),
            (Some(282_025_001), Some(70_369_935))
        );
        let d = headline("RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm. Exceeded hbm capacity by 17.34G.").unwrap();
        assert_eq!(d.msg.kind, OomKind::TpuCompileHbm);
        assert_eq!(d.msg.memory_space.as_deref(), Some("hbm"));
        assert_eq!(d.msg.error_code.as_deref(), Some("E1000"));
        assert_eq!(d.msg.capacity_bytes, Some(32 << 30));
        assert_eq!(d.msg.used_bytes, Some(52_978_421_596)); // 49.34 × 2^30
    }

    #[test]
    fn reads_the_temporaries_wording_and_the_bare_usage_sentence() {
        // heldout37/06: the newer wording, whose two halves a log may wrap apart.
        let d = headline("Ran out of memory on HBM, the total memory required for HLO temporaries (38.28G) exceeds available HBM (31.24G).").unwrap();
        assert_eq!(d.msg.kind, OomKind::TpuCompileHbm);
        assert_eq!(d.msg.memory_space.as_deref(), Some("hbm"));
        assert_eq!(d.msg.used_bytes, Some(41_102_837_023));
        assert_eq!(d.msg.capacity_bytes, Some(33_543_694_582));
        let tail =
            headline("for HLO temporaries (100.13G) exceeds available HBM (94.74G).").unwrap();
        assert_eq!(tail.msg.used_bytes, Some(107_513_768_837));
        assert!(has_trigger(
            "RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total"
        ));
        // heldout37/08: the usage sentence quoted alone in a run note.
        let d =
            headline("**Symptom**: `Used 98.33G of 30.75G hbm. Exceeded hbm capacity by 67.59G`")
                .unwrap();
        assert_eq!(d.msg.memory_space.as_deref(), Some("hbm"));
        assert_eq!(d.msg.used_bytes, Some(105_581_033_554));
        assert_eq!(d.msg.capacity_bytes, Some(33_017_561_088));
        assert_eq!(d.msg.exceeded_by_bytes, Some(72_574_209_884));
        // A wrapped headline's tail is no quote of its own (heldout23/04), and prose that
        // says HBM ran short, with no figure, is no message.
        assert!(!has_trigger(
            "31.25G hbm. Exceeded hbm capacity by 28.16G.` Never reached step 0."
        ));
        assert!(!has_trigger(
            "the cumulative sort buffer exceeds available HBM even at the smallest batch."
        ));
    }

    #[test]
    fn reads_block_labels() {
        assert_eq!(
            value_after_label("reserved(Infeed/Outfeed/Continuations) 529.00M"),
            Some(554_696_704)
        );
        assert_eq!(value_after_label("arguments       unknown size"), None);
        assert_eq!(
            value_after_label("output    5.06G (71.6% utilization) [may share]"),
            Some(5_433_133_629)
        );
        assert_eq!(
            total_usage("Total hbm usage >= 9.60G:").map(|t| t.0),
            Some("hbm".into())
        );
        assert_eq!(program_requirement("Program requirement:  3.95G"), None);
    }

    #[test]
    fn reads_runtime_failures() {
        let d = headline("Error allocating device buffer: Attempting to allocate 129.50M. That was not possible. There are 78.17M free.; (0x0x0_HBM0)").unwrap();
        assert_eq!(d.msg.kind, OomKind::TpuRuntime);
        assert_eq!(d.msg.requested_bytes, Some(135_790_592));
        let d = headline("RESOURCE_EXHAUSTED: Allocation (size=107374182400) would exceed memory (size=17179869184) :: #allocation7 [shape = 'u8[327680,327680]{1,0:T(8,128)(4,1)}', space=hbm, size = 0xffffffffffffffff, tag = 'output of xor_convert_fusion@{}'] :: <no-hlo-instruction>").unwrap();
        assert_eq!(d.msg.capacity_bytes, Some(17_179_869_184));
        assert_eq!(d.msg.memory_space.as_deref(), Some("hbm"));
        assert_eq!(
            d.msg.requested_shape.as_deref(),
            Some("u8[327680,327680]{1,0:T(8,128)(4,1)}")
        );
        let refused = &d.msg.allocations;
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].size_bytes, 107_374_182_400);
        assert_eq!(refused[0].shape, "u8[327680,327680]{1,0:T(8,128)(4,1)}");
        assert_eq!(refused[0].xla_label, "output of xor_convert_fusion@{}");
        let d = headline("XlaRuntimeError: RESOURCE_EXHAUSTED: Could not allocate 10485760 bytes in memory 0x0x0_HBM0; 4374528 bytes allocatable, 14942208 bytes available").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(10_485_760));
        assert_eq!(d.msg.reservable_bytes, Some(4_374_528));
        assert_eq!(d.msg.free_bytes, Some(14_942_208));
        let d = headline("RESOURCE_EXHAUSTED: Error loading program: Attempting to reserve 1.04G at the bottom of memory. That was not possible. There are 905.37M free, 0B reserved, and 905.37M reservable. If fragmentation is eliminated, the maximum reservable bytes would be 905.37M, so compaction wouldn't help.").unwrap();
        assert_eq!(d.msg.compacted_reservable_bytes, d.msg.free_bytes);
        assert_eq!(d.msg.requested_op.as_deref(), Some(short::PROGRAM_LOAD_OP));
    }
}
