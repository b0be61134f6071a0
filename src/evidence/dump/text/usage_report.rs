//! `*-memory-usage-report.txt`: totals the buffer assignment is checked against. JAX 0.10's
//! XLA writes one block per memory space (`Memory Space: default (color=0)` then
//! `Total bytes: N (…)`, every allocation of that color), other versions one
//! `Total bytes used: N (…)` over all allocations. Its tables list the largest
//! allocations or offsets only, so the plan itself comes from the buffer assignment.

use super::assignment::leading_number;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageTotals {
    /// `(color, total bytes)` per memory-space block.
    pub by_color: Vec<(i64, u64)>,
    /// The total over all allocations, in the other layout.
    pub all: Option<u64>,
}

/// Reads the totals; everything else is skipped.
pub fn parse(text: &str) -> UsageTotals {
    let mut out = UsageTotals::default();
    let mut color = 0i64;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Memory Space: ") {
            color = rest
                .rsplit_once("(color=")
                .and_then(|(_, c)| c.strip_suffix(')'))
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("Total bytes: ") {
            if let Some(total) = leading_number(rest) {
                out.by_color.push((color, total));
            }
        } else if let Some(rest) = line.strip_prefix("Total bytes used: ") {
            out.all = out.all.or(leading_number(rest));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_layouts() {
        let per_space = "Memory Space: default (color=0)\nTotal bytes: 65978616 (62.92MiB)\n  x\nMemory Space: host (color=5)\nTotal bytes: 8 (8B)\n";
        assert_eq!(parse(per_space).by_color, vec![(0, 65978616), (5, 8)]);
        let other = "Total bytes used: 1024 (1.0KiB)\n\nAllocations sorted by size:\n";
        assert_eq!(parse(other).all, Some(1024));
        assert_eq!(parse("Total bytes: x\n"), UsageTotals::default());
    }
}
