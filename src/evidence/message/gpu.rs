//! XLA:GPU's buffer-assignment report, printed after `Out of memory while trying to
//! allocate N bytes.`: `BufferAssignment OOM Debugging.`, the `BufferAssignment stats:`
//! summary (parameters, constants, outputs, temporaries and their fragmentation, total)
//! and the `Peak buffers:` listing.

use super::draft::{set, Block, Draft, Family};
use super::listing;
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

/// XLA:GPU's scheduler finding the program's arguments and outputs above the memory it
/// may plan for: `The byte size of input/output arguments (N) exceeds the base limit
/// (M).` Printed while compiling, before any failure; `(N, M)`.
pub fn scheduler_limit(body: &str) -> Option<(u64, u64)> {
    let rest = super::fields::after(body, "byte size of input/output arguments (")?;
    let io = units::size_exact_prefix(rest, true)?.0;
    let limit = super::fields::after(rest, "exceeds the base limit (")
        .and_then(|r| units::size_exact_prefix(r, true))?
        .0;
    Some((io, limit))
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_schedulers_limit() {
        let line = "E0000 00:00:1773083054.653585   70889 gpu_hlo_schedule.cc:868] The byte size of input/output arguments (86973087744) exceeds the base limit (81174881894). This indicates an error in the calculation!";
        assert_eq!(
            super::scheduler_limit(line),
            Some((86_973_087_744, 81_174_881_894))
        );
        assert_eq!(
            super::scheduler_limit("The byte size of input/output arguments (86973087744)"),
            None
        );
    }
}
