//! The allocations a message lists: XLA:TPU's `Largest program allocations in hbm` (entries
//! `1. Size: …`) and XLA:GPU's `Peak buffers` (entries `Buffer 1:`). Both print one field
//! per line and close each entry with a line of `=`, which is how a cut listing shows.

use super::draft::Draft;
use super::fields::{bounded, field, number_attr, quoted_attr};
use super::model::MessageAllocation;
use super::units;

/// Entries kept per message: real listings run from a few entries to over a thousand;
/// the largest come first, so the first 512 are the ones that matter.
pub const MAX_ALLOCATIONS: usize = 512;

/// Keys that start an entry's field line, for the scanner's record-start test.
pub const KEYS: [&str; 10] = [
    "Size:",
    "Operator:",
    "Shape:",
    "Unpadded size:",
    "Extra memory due to padding:",
    "XLA label:",
    "XLA Label:",
    "Allocation type:",
    "Entry Parameter Subshape:",
    "Buffer ",
];

/// Field lines whose value a terminal or forum may wrap onto the next line.
pub const WRAPPING_KEYS: [&str; 4] = ["Operator:", "XLA label:", "XLA Label:", "Shape:"];

/// `12. Size: 96.00M`: a TPU entry's first line. Returns the size.
pub fn tpu_entry_start(body: &str) -> Option<u64> {
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let rest = body.get(digits..)?.strip_prefix(". Size:")?;
    units::size_exact_prefix(rest, false).map(|(bytes, _)| bytes)
}

/// `Size: 50.23M` alone on its line: a TPU entry whose `1. ` a forum's Markdown took for
/// a list's number and dropped. Only a TPU listing's own (GPU entries have a `Size:`
/// field too).
pub fn unnumbered_tpu_entry_start(body: &str) -> Option<u64> {
    let rest = body.strip_prefix("Size:")?;
    let (bytes, len) = units::size_exact_prefix(rest, false)?;
    rest.get(len..)?.trim().is_empty().then_some(bytes)
}

/// `Buffer 3:`: a GPU entry's first line.
pub fn gpu_entry_start(body: &str) -> bool {
    body.strip_prefix("Buffer ")
        .and_then(|r| r.strip_suffix(':'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `body` starts an entry printed without its `N. Size:` line (XLA prints
/// scoped vmem allocations so): a label with no entry open, or after one that has its
/// label already.
pub fn starts_sizeless_entry(draft: &Draft, body: &str) -> bool {
    let label = body.starts_with("XLA label:") || body.starts_with("XLA Label:");
    label
        && (!draft.entry_open
            || draft
                .msg
                .allocations
                .last()
                .is_some_and(|a| !a.xla_label.is_empty()))
}

/// Whether `body` is an entry's closing line (`==========================`).
pub fn is_separator(body: &str) -> bool {
    body.len() >= 3 && body.bytes().all(|b| b == b'=')
}

/// Opens a new entry of `size` bytes (0 until a GPU entry's `Size:` line).
pub fn open_entry(draft: &mut Draft, size: u64) {
    draft.entry_open = true;
    if draft.msg.allocations.len() >= MAX_ALLOCATIONS {
        draft.msg.omitted_allocations = draft.msg.omitted_allocations.saturating_add(1);
        draft.skipping_entry = true;
        return;
    }
    draft.skipping_entry = false;
    draft.msg.allocations.push(MessageAllocation {
        size_bytes: size,
        ..MessageAllocation::default()
    });
}

/// Reads one line inside an open entry. Returns whether it was an entry line.
pub fn entry_field(draft: &mut Draft, body: &str) -> bool {
    if is_separator(body) {
        let was_open = draft.entry_open;
        draft.entry_open = false;
        return was_open;
    }
    if !draft.entry_open || !KEYS.iter().any(|k| body.starts_with(k)) {
        return false;
    }
    if draft.skipping_entry {
        return true;
    }
    if let Some(entry) = draft.msg.allocations.last_mut() {
        fill(entry, body);
    }
    true
}

fn fill(entry: &mut MessageAllocation, body: &str) {
    if let Some(v) = field(body, "Size:") {
        entry.size_bytes = size(v).unwrap_or(entry.size_bytes);
    } else if let Some(v) = field(body, "Operator:") {
        operator(entry, v);
    } else if let Some(v) = field(body, "Shape:") {
        entry.shape = bounded(v);
    } else if let Some(v) = field(body, "Entry Parameter Subshape:") {
        entry.shape = bounded(v);
        entry.allocation_type = "parameter".into();
    } else if let Some(v) = field(body, "Unpadded size:") {
        entry.unpadded_bytes = size(v);
    } else if let Some(v) = field(body, "Extra memory due to padding:") {
        entry.padding_bytes = size(v);
        entry.padding_expansion = expansion(v);
    } else if let Some(v) = field(body, "XLA label:").or_else(|| field(body, "XLA Label:")) {
        entry.xla_label = bounded(v);
    } else if let Some(v) = field(body, "Allocation type:") {
        entry.allocation_type = bounded(v);
    }
}

/// `op_type="…" op_name="…" source_file="…" source_line=N`.
fn operator(entry: &mut MessageAllocation, value: &str) {
    entry.op_type = quoted_attr(value, "op_type").unwrap_or_default();
    entry.op_name = quoted_attr(value, "op_name").unwrap_or_default();
    let file = quoted_attr(value, "source_file").unwrap_or_default();
    entry.source = match number_attr(value, "source_line") {
        Some(line) if !file.is_empty() => bounded(&format!("{file}:{line}")),
        _ => file,
    };
}

fn size(text: &str) -> Option<u64> {
    units::size_exact_prefix(text, false).map(|(bytes, _)| bytes)
}

/// The factor in `31.00G (32.0x expansion)`.
fn expansion(text: &str) -> Option<f64> {
    let inner = text.split('(').nth(1)?;
    let factor = inner.split("x expansion").next()?.trim();
    let value: f64 = factor.parse().ok()?;
    value.is_finite().then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_entry_starts() {
        assert_eq!(tpu_entry_start("1. Size: 32.00G"), Some(34_359_738_368));
        assert_eq!(tpu_entry_start("Size: 32.00G"), None);
        assert_eq!(
            unnumbered_tpu_entry_start("Size: 32.00G"),
            Some(34_359_738_368)
        );
        assert_eq!(unnumbered_tpu_entry_start("Size: 32.00G (x)"), None);
        assert!(gpu_entry_start("Buffer 12:"));
        assert!(!gpu_entry_start("Buffer x:"));
        assert!(is_separator("=========================="));
        assert!(!is_separator("=="));
    }

    #[test]
    fn reads_the_fields_of_an_entry() {
        let mut entry = MessageAllocation::default();
        for line in [
            "Size: 6.00MiB",
            r#"Operator: op_name="jit(f)/concatenate[dimension=0]" source_file="/m.py" source_line=689"#,
            "XLA Label: concatenate",
            "Shape: f32[4096,128,3]",
            "Extra memory due to padding: 31.00G (32.0x expansion)",
        ] {
            fill(&mut entry, line);
        }
        assert_eq!(entry.size_bytes, 6 << 20);
        assert_eq!(entry.op_name, "jit(f)/concatenate[dimension=0]");
        assert_eq!(entry.source, "/m.py:689");
        assert_eq!(entry.xla_label, "concatenate");
        assert_eq!(entry.padding_bytes, Some(31 << 30));
        assert_eq!(entry.padding_expansion, Some(32.0));
    }
}
