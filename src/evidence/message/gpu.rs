//! XLA:GPU's buffer-assignment report, printed after `Out of memory while trying to
//! allocate N bytes.`: `BufferAssignment OOM Debugging.`, the `BufferAssignment stats:`
//! summary (parameters, constants, outputs, temporaries and their fragmentation, total)
//! and the `Peak buffers:` listing.

use super::listing;
use super::scan::{set, Block, Draft, Family};
use super::units;

/// Lines that start a GPU block or a summary field, for the scanner's record-start test.
const KEYS: [&str; 10] = [
    "BufferAssignment",
    "Peak buffers:",
    "parameter allocation:",
    "constant allocation:",
    "maybe_live_out allocation:",
    "preallocated temp allocation:",
    "preallocated temp fragmentation:",
    "total allocation:",
    "total fragmentation:",
    "Buffer ",
];

pub fn is_key_line(body: &str) -> bool {
    KEYS.iter().any(|k| body.starts_with(k))
}

/// Whether a line without a headline starts the GPU report (a paste that begins there).
pub fn opens(body: &str) -> bool {
    body.starts_with("BufferAssignment OOM Debugging")
        || body.starts_with("BufferAssignment stats:")
        || body.starts_with("Peak buffers:")
}

/// Reads a line of the GPU report into `draft`. Returns whether the line was one.
pub fn block_line(draft: &mut Draft, body: &str) -> bool {
    if body.starts_with("BufferAssignment OOM Debugging") {
        return draft.adopt(Family::Gpu);
    }
    if body.starts_with("BufferAssignment stats:") {
        let opened = draft.adopt(Family::Gpu) && draft.enter(Block::GpuStats);
        draft.stats_open |= opened;
        return opened;
    }
    if body.starts_with("Peak buffers:") {
        let opened = draft.adopt(Family::Gpu) && draft.enter(Block::GpuPeak);
        draft.listing_started |= opened;
        return opened;
    }
    match draft.block {
        Block::GpuStats => stats_field(draft, body),
        Block::GpuPeak if listing::gpu_entry_start(body) => {
            listing::open_entry(draft, 0);
            true
        }
        Block::GpuPeak => listing::entry_field(draft, body),
        _ => false,
    }
}

/// One line of `BufferAssignment stats:` (`parameter allocation:    6.00MiB`).
fn stats_field(draft: &mut Draft, body: &str) -> bool {
    let Some((key, value)) = body.split_once(':') else {
        return false;
    };
    let bytes = units::size_exact_prefix(value, false).map(|s| s.0);
    let m = &mut draft.msg;
    let slot = match key.trim() {
        "parameter allocation" => &mut m.arguments_bytes,
        "constant allocation" => &mut m.constant_bytes,
        "maybe_live_out allocation" => &mut m.output_bytes,
        "preallocated temp allocation" => &mut m.temp_bytes,
        "preallocated temp fragmentation" => &mut m.temp_fragmentation_bytes,
        "total allocation" => {
            draft.stats_open = false;
            &mut m.used_bytes
        }
        "total fragmentation" => &mut m.fragmentation_bytes,
        _ => return false,
    };
    set(slot, bytes);
    true
}
