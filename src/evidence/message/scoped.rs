//! A kernel's scoped memory over what one core has: Mosaic's `Scoped allocation with
//! size 31.07M and limit 16.00M exceeded scoped vmem limit by 15.07M`, Pallas on GPU's
//! `Shared memory size limit exceeded: requested 4194304, available: 101376`, Triton's
//! `out of resource: shared memory, Required: 65536, Hardware limit: 49152`, and XLA:GPU's
//! `Shared memory requested exceeds device resources`. The block sizes of one kernel,
//! not the model, are what does not fit. (XLA:TPU's compile-time check in memory space
//! `vmem` or `smem` is read by `tpu` and triaged the same way.)

use super::fields::{after, count_after, size_after, word};
use super::model::OomKind;
use super::scan::Draft;

/// Phrases of a scoped-memory failure (the scan's triggers include them).
pub const TRIGGERS: [&str; 4] = [
    "Scoped allocation with size",
    "Shared memory size limit exceeded",
    "out of resource: shared memory",
    "Shared memory requested exceeds",
];

/// A scoped-memory failure, or `None` when `body` is not one.
pub fn headline(body: &str) -> Option<Draft> {
    if !TRIGGERS.iter().any(|t| body.contains(t)) {
        return None;
    }
    let mut draft = Draft::new(OomKind::ScopedMemory, true);
    let m = &mut draft.msg;
    if let Some(rest) = after(body, "Scoped allocation with size ") {
        m.requested_bytes = size_after(body, "Scoped allocation with size ");
        m.capacity_bytes = size_after(rest, "and limit ");
        m.exceeded_by_bytes =
            after(rest, "exceeded scoped ").and_then(|r| size_after(r, " limit by "));
        m.memory_space = after(rest, "exceeded scoped ").and_then(word);
    } else {
        m.memory_space = Some("shared".into());
        // Triton glues its fields when the exception is printed without separators
        // (`shared memoryRequired: 110592Hardware limit: 101376`).
        m.requested_bytes = count_after(body, "Required:")
            .or_else(|| count_after(body, "requested "))
            .or_else(|| count_after(body, "requested: "));
        // `Hardware limit: N` (`Hardware limitation: N` in some Triton versions).
        let hardware = after(body, "Hardware limit")
            .and_then(|r| r.split_once(':'))
            .and_then(|(_, v)| super::units::size_exact_prefix(v, true))
            .map(|s| s.0);
        m.capacity_bytes = hardware.or_else(|| count_after(body, "available:"));
    }
    Some(draft)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_scoped_memory_failures() {
        let d = headline("RESOURCE_EXHAUSTED: Scoped allocation with size 31.07M and limit 16.00M exceeded scoped vmem limit by 15.07M. It should not be possible to run out of scoped vmem").unwrap();
        let m = d.msg;
        assert_eq!(m.memory_space.as_deref(), Some("vmem"));
        assert_eq!(m.capacity_bytes, Some(16 << 20));
        assert!(m.requested_bytes.is_some() && m.exceeded_by_bytes.is_some());
        let d = headline("out of resource: shared memory, Required: 65536, Hardware limit: 49152. Reducing block sizes or `num_stages` may help.").unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(65536), Some(49152))
        );
        let d = headline("out of resource: shared memoryRequired: 110592Hardware limit: 101376")
            .unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(110_592), Some(101_376))
        );
        let d = headline("RESOURCE_EXHAUSTED: Shared memory size limit exceeded: requested 4194304, available: 101376").unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(4_194_304), Some(101_376))
        );
    }
}
