//! `*-live-range.txt`: the module's flattened schedule and, for every value, the
//! schedule positions it is live over (both ends included).
//!
//! ```text
//! HloLiveRange (max 190):
//!   InstructionSequence:
//!     0:params_0___w1__.1
//!   BufferLiveRange:
//!     copy.96{}:19-170
//!   Live ranges at 101 (peak):
//!     broadcast_multiply_fusion{}: 4194304 bytes (cumulative: 4194304 bytes)
//! ```
//!
//! The `Live ranges at … (peak)` list is XLA's own peak over every value, parameters
//! included; the plan's heap peak is computed from the ranges instead (see `replay`).

use std::collections::HashMap;

use super::assignment::split_index;

/// A value's key: its instruction and shape index.
pub type ValueKey = (String, Vec<i64>);

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveRanges {
    /// Instruction names by schedule position.
    pub sequence: Vec<String>,
    /// `[start, end]` of each value, in schedule positions.
    pub ranges: HashMap<ValueKey, (u64, u64)>,
    /// Range lines that could not be read.
    pub unread_lines: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Other,
    Sequence,
    Ranges,
}

/// Reads the file; sections other than the schedule and the ranges are skipped.
pub fn parse(text: &str) -> LiveRanges {
    let mut out = LiveRanges::default();
    let mut section = Section::Other;
    for line in text.lines() {
        let row = line.trim();
        if (row.ends_with(':') && !row.contains(char::is_whitespace))
            || row.starts_with("Live ranges")
        {
            section = match row {
                "InstructionSequence:" => Section::Sequence,
                "BufferLiveRange:" => Section::Ranges,
                _ => Section::Other,
            };
            continue;
        }
        match section {
            Section::Sequence => match row.split_once(':') {
                Some((_, name)) => out.sequence.push(name.to_owned()),
                None => section = Section::Other,
            },
            Section::Ranges => match range(row) {
                Some((key, span)) => {
                    out.ranges.insert(key, span);
                }
                None => out.unread_lines = out.unread_lines.saturating_add(1),
            },
            Section::Other => {}
        }
    }
    out
}

/// `copy.96{}:19-170` → ((`copy.96`, []), (19, 170)).
fn range(row: &str) -> Option<(ValueKey, (u64, u64))> {
    let (value, span) = row.rsplit_once(':')?;
    let (start, end) = span.split_once('-')?;
    let (name, index) = split_index(value)?;
    let span = (start.trim().parse().ok()?, end.trim().parse().ok()?);
    Some(((name.to_owned(), index), span))
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

    const SAMPLE: &str = "HloLiveRange (max 3):
  InstructionSequence:
    0:x.1
    1:copy.96
    2:while.14
  BufferLiveRange:
    x.1{}:0-3
    copy.96{}:1-2
    while.14{1}:2-3
    broken
  Live ranges at 2 (peak):
    copy.96{}: 4 bytes (cumulative: 4 bytes)
  Stack trace breakdown for peak usage: 4 bytes
    main (100.0%, total: 4 bytes)
";

    #[test]
    fn reads_the_schedule_and_the_ranges() {
        let r = parse(SAMPLE);
        assert_eq!(r.sequence, vec!["x.1", "copy.96", "while.14"]);
        assert_eq!(r.ranges.len(), 3);
        assert_eq!(r.ranges[&("copy.96".to_owned(), vec![])], (1, 2));
        assert_eq!(r.ranges[&("while.14".to_owned(), vec![1])], (2, 3));
        assert_eq!(r.unread_lines, 1);
    }

    #[test]
    fn refuses_broken_ranges() {
        for row in ["a{}:1", "a{}:x-2", "a{x}:1-2", "a{}:-1-2", ""] {
            assert!(range(row).is_none(), "{row}");
        }
    }
}
