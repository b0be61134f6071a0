//! AWS Neuron's runtime (NRT) failing to place a tensor in a NeuronCore's device memory.
//! One failure prints several lines, each a headline of its own:
//!
//! ```text
//! ERROR  TDRV:dmem_alloc_internal   Failed to alloc DEVICE memory: 180355072
//! ERROR  TDRV:log_dev_mem           Failed to allocate 172.000MB (usage: tensors) on ND 0:NC 0, current utilization:
//!     * total: 15.855GB
//!     * tensors: 15.855GB
//! ERROR  TDRV:tensor_allocate       Failed to allocate 180355072 bytes on DEVICE for tensor UNKNOWN.
//! ```
//!
//! They are read as one message: the exact count, the device (`ND 0`) and what the core
//! already held (`total:`).

use super::draft::{set, Draft};
use super::fields::{after, count_after, size_after};
use super::model::{add_usage, OomKind, OomMessage};
use super::short::leading_u32;

/// Phrases of these lines (the scan's triggers include them).
pub const TRIGGERS: [&str; 5] = [
    "Failed to alloc DEVICE memory",
    "current utilization:",
    "bytes on DEVICE for tensor",
    COMPILER_ESTIMATE,
    COMPILER_PEAK,
];

/// The Neuron compiler's refusal, before anything runs: `[XCG815]  Estimated peak HBM
/// usage (22.839451) exceeds 16GB. Neff won't be able to load on chip`.
const COMPILER_ESTIMATE: &str = "Estimated peak HBM usage (";

/// Newer releases of the compiler word it with the parts of the peak: `[NCC_EOOM001]
/// Maximum peak HBM usage of 32.00GB exceeds HBM limit of 24.00GB for Trn2. This
/// consists of 16.00GB I/O tensors, 0B intermediate tensors, and 16.00GB internal
/// (scratchpad) allocations`.
const COMPILER_PEAK: &str = "peak HBM usage of ";

/// One line of a Neuron runtime failure, or `None` when `body` is not one.
pub fn headline(body: &str) -> Option<Draft> {
    if !TRIGGERS.iter().any(|t| body.contains(t)) {
        return None;
    }
    if let Some(rest) = after(body, COMPILER_ESTIMATE) {
        return compiler_estimate(body, rest);
    }
    if let Some(rest) = after(body, COMPILER_PEAK) {
        return compiler_peak(body, rest);
    }
    let mut draft = Draft::new(OomKind::NeuronRuntime, true);
    let m = &mut draft.msg;
    m.requested_bytes = count_after(body, "Failed to alloc DEVICE memory: ")
        .or_else(|| {
            after(body, "Failed to allocate ")
                .filter(|r| r.contains("bytes on DEVICE"))
                .and_then(|r| count_after(r, ""))
        })
        .or_else(|| size_after(body, "Failed to allocate "));
    m.device_ordinal = after(body, " on ND ").and_then(leading_u32);
    // The utilization list may have been joined onto its line (it is left open by `:`).
    if let Some(list) = after(body, "current utilization:") {
        for item in list.split('*') {
            utilization_item(m, item);
        }
    }
    Some(draft)
}

/// The compiler's estimate against the memory: the estimate is printed without its
/// unit, which is the limit's (`(22.839451) exceeds 16GB`).
fn compiler_estimate(body: &str, rest: &str) -> Option<Draft> {
    let (estimate, rest) = rest.split_once(')')?;
    let limit = after(rest, "exceeds ")?.trim_start();
    let capacity = super::units::size_prefix(limit, false)?.0;
    let digits = limit.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let unit: String = limit
        .get(digits..)?
        .trim_start()
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    let mut draft = Draft::new(OomKind::Short, true);
    let m = &mut draft.msg;
    m.used_bytes =
        super::units::size_prefix(&format!("{} {unit}", estimate.trim()), false).map(|s| s.0);
    m.capacity_bytes = Some(capacity);
    m.memory_space = Some("hbm".into());
    m.error_code = after(body, "[XCG")
        .and_then(|r| r.split_once(']'))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map(|(n, _)| format!("XCG{n}"));
    Some(draft)
}

/// The compiler's peak against the limit, and the parts it names.
fn compiler_peak(body: &str, rest: &str) -> Option<Draft> {
    let mut draft = Draft::new(OomKind::Short, true);
    let m = &mut draft.msg;
    m.used_bytes = super::units::size_prefix(rest, false).map(|s| s.0);
    m.capacity_bytes = size_after(rest, "limit of ");
    m.memory_space = Some("hbm".into());
    m.error_code = after(body, "[NCC_")
        .and_then(|r| r.split_once(']'))
        .filter(|(code, _)| !code.is_empty() && code.bytes().all(|b| b.is_ascii_alphanumeric()))
        .map(|(code, _)| format!("NCC_{code}"));
    // `This consists of 16.00GB I/O tensors, 0B intermediate tensors, and 16.00GB …`
    if let Some(parts) = after(rest, "consists of ") {
        for part in parts.split(", ") {
            let part = part.trim().trim_start_matches("and ");
            let Some((bytes, len)) = super::units::size_prefix(part, false) else {
                continue;
            };
            let name = part.get(len..).unwrap_or("").trim().trim_end_matches('.');
            if !name.is_empty() && name.len() <= 48 {
                add_usage(&mut m.usage, name, bytes);
            }
        }
    }
    Some(draft)
}

/// Whether `next` is another line of `first`'s failure: the runtime prints each failure
/// at every layer it passes (allocation, logging, the tensor).
pub fn is_same_failure(first: &Draft, next: &Draft) -> bool {
    first.msg.kind == OomKind::NeuronRuntime && next.msg.kind == OomKind::NeuronRuntime
}

/// Takes what `next` adds to `first`; the first statement of a figure stays.
pub fn merge(first: &mut Draft, next: &Draft) {
    let (a, b) = (&mut first.msg, &next.msg);
    set(&mut a.requested_bytes, b.requested_bytes);
    set(&mut a.device_ordinal, b.device_ordinal);
    set(&mut a.used_bytes, b.used_bytes);
    for item in &b.usage {
        add_usage(&mut a.usage, &item.name, item.bytes);
    }
}

/// `total: 15.855GB` is what the core holds; the other items are its uses. Whether
/// `item` was one.
fn utilization_item(m: &mut OomMessage, item: &str) -> bool {
    let Some((name, value)) = item.split_once(':') else {
        return false;
    };
    let name = name.trim();
    let Some(bytes) = super::units::size_prefix(value, false).map(|s| s.0) else {
        return false;
    };
    if name == "total" {
        set(&mut m.used_bytes, Some(bytes));
    } else if !name.is_empty() && name.len() <= 32 {
        add_usage(&mut m.usage, name, bytes);
    } else {
        return false;
    }
    true
}

/// An item of the utilization list on a line of its own (`* total: 15.855GB`).
pub fn block_line(draft: &mut Draft, body: &str) -> bool {
    if draft.msg.kind != OomKind::NeuronRuntime {
        return false;
    }
    // `* total: 15.855GB`, or the item without its bullet.
    let item = body.trim_start_matches(['*', ' ', '\t']);
    let known = ["total:", "tensors:", "runtime:", "dma rings:"];
    (body.starts_with('*') || known.iter().any(|k| item.starts_with(k)))
        && utilization_item(&mut draft.msg, item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_compilers_estimate() {
        let d = headline("[XCG815]  Estimated peak HBM usage (22.839451) exceeds 16GB. Neff won't be able to load on chip - Please open a support ticket").unwrap();
        assert_eq!(d.msg.used_bytes, Some(24_523_673_776));
        assert_eq!(d.msg.capacity_bytes, Some(16 << 30));
        assert_eq!(d.msg.error_code.as_deref(), Some("XCG815"));
        assert_eq!(d.msg.memory_space.as_deref(), Some("hbm"));
    }

    #[test]
    fn reads_the_compilers_peak_and_its_parts() {
        // heldout43/08, its three wrapped lines joined.
        let d = headline("[ERROR] [NCC_EOOM001] Maximum peak HBM usage of 32.00GB exceeds HBM limit of 24.00GB for Trn2. This consists of 16.00GB I/O tensors, 0B intermediate tensors, and 16.00GB internal (scratchpad) allocations").unwrap();
        assert_eq!(d.msg.used_bytes, Some(32 << 30));
        assert_eq!(d.msg.capacity_bytes, Some(24 << 30));
        assert_eq!(d.msg.error_code.as_deref(), Some("NCC_EOOM001"));
        let parts: Vec<(&str, u64)> = d
            .msg
            .usage
            .iter()
            .map(|u| (u.name.as_str(), u.bytes))
            .collect();
        assert_eq!(
            parts,
            [
                ("I/O tensors", 16 << 30),
                ("intermediate tensors", 0),
                ("internal (scratchpad) allocations", 16 << 30)
            ]
        );
    }

    #[test]
    fn reads_each_line_of_a_runtime_failure() {
        let d = headline("ERROR  TDRV:dmem_alloc_internal                     Failed to alloc DEVICE memory: 180355072").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(180_355_072));
        let d = headline("Failed to allocate 172.000MB (usage: tensors) on ND 0:NC 0, current utilization: * total: 15.855GB * tensors: 15.855GB").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(172 << 20));
        assert_eq!(d.msg.device_ordinal, Some(0));
        assert!(d.msg.used_bytes.is_some_and(|u| u > 15 << 30));
        assert_eq!(d.msg.usage.len(), 1);
        assert_eq!(d.msg.usage[0].name, "tensors");
        let d =
            headline("Failed to allocate 180355072 bytes on DEVICE for tensor UNKNOWN.").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(180_355_072));
        assert!(headline("Failed to allocate 3 apples").is_none());
    }
}
